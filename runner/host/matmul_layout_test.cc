#include "runner/host/matmul_layout.h"

#include <gtest/gtest.h>

namespace kbench {
namespace {

v1::MatmulStep Linear() {
  // out[B, K] = gathered[B, R*H] . w[K, R*H]^T + bias[K]: F.linear.
  v1::MatmulStep s;
  s.set_a("gathered");
  s.set_b("w");
  s.set_d("out");
  s.set_bias("bias");
  s.set_m("B");
  s.set_n("K");
  s.set_k("R*H");
  s.set_trans_b(true);
  return s;
}

TEST(MatmulLayoutTest, FLinearIsTheCallAnExpertWouldWrite) {
  // gather_linear's F.linear step, as cuBLASLt is called by hand for a
  // row-major linear layer (and as kbench's C++ reference once did):
  // A = w (R*H x K, transposed), B = gathered (R*H x B), D = out^T (K x B),
  // bias of K.
  auto l = LayOutMatmul(Linear(), {{"R", 4}, {"B", 12}, {"H", 32}, {"K", 56}});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->m, 56);
  EXPECT_EQ(l->n, 12);
  EXPECT_EQ(l->k, 128);
  EXPECT_EQ(l->a.name, "w");
  EXPECT_TRUE(l->a.transpose);
  EXPECT_EQ(l->a.rows, 128);
  EXPECT_EQ(l->a.cols, 56);
  EXPECT_EQ(l->a.ld, 128);
  EXPECT_EQ(l->b.name, "gathered");
  EXPECT_FALSE(l->b.transpose);
  EXPECT_EQ(l->b.rows, 128);
  EXPECT_EQ(l->b.cols, 12);
  EXPECT_EQ(l->b.ld, 128);
  EXPECT_EQ(l->d.name, "out");
  EXPECT_EQ(l->d.rows, 56);
  EXPECT_EQ(l->d.cols, 12);
  EXPECT_EQ(l->d.ld, 56);
  EXPECT_EQ(l->bias, "bias");
  EXPECT_EQ(l->batch, 1);
  EXPECT_EQ(l->alpha, 1.0);
  // Each operand spans exactly its tensor.
  EXPECT_EQ(SpanElements(l->a, 1), 56 * 128);
  EXPECT_EQ(SpanElements(l->b, 1), 12 * 128);
  EXPECT_EQ(SpanElements(l->d, 1), 12 * 56);
}

TEST(MatmulLayoutTest, PlainMatmulAndTransposedA) {
  v1::MatmulStep s;
  s.set_a("A");
  s.set_b("B");
  s.set_d("C");
  s.set_m("M");
  s.set_n("N");
  s.set_k("K");
  const DimValues dims = {{"M", 3}, {"N", 5}, {"K", 7}};
  auto l = LayOutMatmul(s, dims);
  ASSERT_TRUE(l.ok()) << l.status();
  // B row-major [K, N] is column-major N x K, not transposed.
  EXPECT_FALSE(l->a.transpose);
  EXPECT_EQ(l->a.rows, 5);
  EXPECT_EQ(l->a.cols, 7);
  EXPECT_EQ(l->a.ld, 5);
  // A row-major [M, K] is column-major K x M.
  EXPECT_FALSE(l->b.transpose);
  EXPECT_EQ(l->b.rows, 7);
  EXPECT_EQ(l->b.cols, 3);
  EXPECT_EQ(l->b.ld, 7);
  EXPECT_EQ(SpanElements(l->a, 1), 35);
  EXPECT_EQ(SpanElements(l->b, 1), 21);
  // a stored [K, M]: column-major M x K, transposed.
  s.set_trans_a(true);
  l = LayOutMatmul(s, dims);
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(l->b.transpose);
  EXPECT_EQ(l->b.rows, 3);
  EXPECT_EQ(l->b.cols, 7);
  EXPECT_EQ(l->b.ld, 3);
}

TEST(MatmulLayoutTest, BatchedNeedsStridesAndSpansEveryMatrix) {
  v1::MatmulStep s = Linear();
  s.set_batch("R");
  auto l = LayOutMatmul(s, {{"R", 4}, {"B", 12}, {"H", 32}, {"K", 56}});
  EXPECT_EQ(l.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(l.status().message().find("stride_a"), std::string::npos);
  s.set_stride_a("B*R*H");
  s.set_stride_b("K*R*H");
  s.set_stride_d("B*K");
  l = LayOutMatmul(s, {{"R", 4}, {"B", 12}, {"H", 32}, {"K", 56}});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->batch, 4);
  EXPECT_EQ(l->a.batch_stride, 56 * 128);
  EXPECT_EQ(l->b.batch_stride, 12 * 128);
  EXPECT_EQ(SpanElements(l->d, l->batch), 4 * 12 * 56);
}

TEST(MatmulLayoutTest, BadExpressionsAreNamed) {
  v1::MatmulStep s = Linear();
  s.set_k("R*Q");
  auto l = LayOutMatmul(s, {{"R", 4}, {"B", 12}, {"H", 32}, {"K", 56}});
  EXPECT_EQ(l.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(l.status().message().find("matmul k 'R*Q'"), std::string::npos);
  s = Linear();
  s.set_m("B-12");
  l = LayOutMatmul(s, {{"R", 4}, {"B", 12}, {"H", 32}, {"K", 56}});
  EXPECT_NE(l.status().message().find("below 1"), std::string::npos);
  s = Linear();
  s.set_alpha(0.5);
  l = LayOutMatmul(s, {{"R", 4}, {"B", 12}, {"H", 32}, {"K", 56}});
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->alpha, 0.5);
}

}  // namespace
}  // namespace kbench
