// The runner's checks on the GPU (runner/device/device_checks.h) against
// the host loops that specify them (compare_math.h, run_checks.h): the
// same counts, maxima and first index, the same keyed checksum, sums equal
// to rounding, at sizes of one block and of many, with NaN, infinities and
// mismatches in the data; and gather_linear's golden kernel against the
// statement computed on the host. Skips without an NVIDIA GPU.
#include "runner/device/device_checks.h"

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "contract/problem_registry.h"
#include "runner/device/device_buffer.h"
#include "runner/device/device_context.h"
#include "runner/device/tensor_set.h"
#include "runner/host/compare_math.h"
#include "runner/host/run_checks.h"
#include "runner/reference/reference_op.h"
#include "testing/process.h"
#include "tests/gpu/device_test.h"
#include "tests/gpu/trusted_kernels_fixtures.h"

namespace kbench {
namespace {

constexpr int kFp32 = v1::DTYPE_FP32;
constexpr int kBf16 = v1::DTYPE_BF16;

class DeviceChecksTest : public DeviceTest {
 protected:
  template <typename T>
  DeviceBuffer Upload(const std::vector<T>& v) {
    auto b = DeviceBuffer::Allocate(v.size() * sizeof(T));
    EXPECT_TRUE(b.ok());
    EXPECT_EQ(cudaMemcpy(b->get(), v.data(), v.size() * sizeof(T),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
    // A pageable copy may return before its DMA lands, and the context's
    // stream does not wait for the legacy one (H100, 2026-12-05: a sum
    // read half-copied data once in two runs).
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    return std::move(*b);
  }
};

struct Case {
  std::vector<float> out, second;
  std::vector<double> ref;
};

// Values near the golden result, with NaN, infinities, mismatches and
// run-to-run differences sprinkled in.
Case MakeCase(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> v(-2, 2);
  std::uniform_int_distribution<int> pick(0, 999);
  Case c;
  for (int64_t i = 0; i < n; ++i) {
    const double r = v(rng);
    float o = static_cast<float>(r);
    float s = o;
    switch (pick(rng)) {
      case 0:
        o = NAN;
        break;
      case 1:
        o = INFINITY;
        break;
      case 2:
        o = static_cast<float>(r + 0.5);
        break;
      case 3:
        s = NAN;
        break;
      case 4:
        s = o + 0.25f;
        break;
      default:
        break;
    }
    c.out.push_back(o);
    c.second.push_back(s);
    c.ref.push_back(r);
  }
  return c;
}

void ExpectSameErrors(const OutputErrors& device, const OutputErrors& host) {
  EXPECT_EQ(device.mismatches, host.mismatches);
  EXPECT_EQ(device.nans, host.nans);
  EXPECT_EQ(device.first, host.first);
  EXPECT_EQ(device.max_abs, host.max_abs);
  EXPECT_EQ(device.max_rel, host.max_rel);
  if (std::isfinite(host.diff_sq)) {
    EXPECT_NEAR(device.diff_sq, host.diff_sq, 1e-12 * host.diff_sq);
  } else {
    EXPECT_EQ(device.diff_sq, host.diff_sq);
  }
  EXPECT_NEAR(device.ref_sq, host.ref_sq, 1e-12 * host.ref_sq);
}

TEST_F(DeviceChecksTest, OutputErrorsAndRunDiffMatchTheHostLoops) {
  v1::Tolerance tol;
  tol.set_atol(1e-5);
  tol.set_rtol(1e-5);
  cudaStream_t s = ctx_->stream();
  // One element, one block, and many blocks with a ragged end.
  for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{3000001}}) {
    SCOPED_TRACE(n);
    const Case c = MakeCase(n, static_cast<uint32_t>(n));
    DeviceBuffer out = Upload(c.out), second = Upload(c.second),
                 ref = Upload(c.ref);
    OutputErrors host = ZeroOutputErrors();
    RunDiff host_diff = ZeroRunDiff();
    for (int64_t i = 0; i < n; ++i) {
      AddOutputError(c.out[i], c.ref[i], i, tol.atol(), tol.rtol(), &host);
      AddRunDiff(c.out[i], c.second[i], i, tol.atol(), tol.rtol(), &host_diff);
    }
    auto device =
        DeviceOutputErrors(out.get(), kFp32, ref.as<double>(), n, tol, s);
    ASSERT_TRUE(device.ok()) << device.status();
    ExpectSameErrors(*device, host);
    // The same call twice gives the same figures, bit for bit.
    auto again =
        DeviceOutputErrors(out.get(), kFp32, ref.as<double>(), n, tol, s);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->diff_sq, device->diff_sq);
    EXPECT_EQ(again->ref_sq, device->ref_sq);

    auto diff = DeviceRunDiff(out.get(), second.get(), kFp32, n, tol, s);
    ASSERT_TRUE(diff.ok()) << diff.status();
    EXPECT_EQ(diff->differ, host_diff.differ);
    EXPECT_EQ(diff->nan_one, host_diff.nan_one);
    EXPECT_EQ(diff->first, host_diff.first);
    EXPECT_EQ(diff->max_abs, host_diff.max_abs);

    for (double constant : {0.0, 0.125}) {
      OutputErrors host_c = ZeroOutputErrors();
      for (int64_t i = 0; i < n; ++i) {
        AddOutputError(constant, c.ref[i], i, tol.atol(), tol.rtol(), &host_c);
      }
      auto device_c =
          DeviceConstantErrors(constant, ref.as<double>(), n, tol, s);
      ASSERT_TRUE(device_c.ok()) << device_c.status();
      ExpectSameErrors(*device_c, host_c);
    }
  }
}

TEST_F(DeviceChecksTest, Bf16OutputsAreReadAsTheHostReadsThem) {
  v1::Tolerance tol;
  tol.set_atol(1e-2);
  tol.set_rtol(1e-2);
  const Case c = MakeCase(70001, 7);
  std::vector<__nv_bfloat16> out;
  OutputErrors host = ZeroOutputErrors();
  for (size_t i = 0; i < c.out.size(); ++i) {
    out.push_back(__float2bfloat16_rn(c.out[i]));
    AddOutputError(__bfloat162float(out.back()), c.ref[i], i, tol.atol(),
                   tol.rtol(), &host);
  }
  DeviceBuffer dout = Upload(out), ref = Upload(c.ref);
  auto device = DeviceOutputErrors(dout.get(), kBf16, ref.as<double>(),
                                   c.out.size(), tol, ctx_->stream());
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_GT(host.mismatches, 0);
  ExpectSameErrors(*device, host);
}

TEST_F(DeviceChecksTest, KeyedChecksumMatchesTheHostAtEveryLength) {
  std::mt19937 rng(3);
  for (size_t bytes :
       {size_t{0}, size_t{1}, size_t{5}, size_t{4096}, size_t{10000003}}) {
    SCOPED_TRACE(bytes);
    std::vector<uint8_t> data(bytes);
    for (uint8_t& b : data) b = static_cast<uint8_t>(rng());
    DeviceBuffer d = Upload(data);
    for (uint64_t key : {uint64_t{0}, uint64_t{0x5eed5eed5eed5eedull}}) {
      auto device = DeviceKeyedChecksum(d.get(), bytes, key, ctx_->stream());
      ASSERT_TRUE(device.ok()) << device.status();
      EXPECT_EQ(*device, KeyedChecksum(data.data(), bytes, key));
    }
  }
}

TEST_F(DeviceChecksTest, ValueSummaryCountsNonFiniteValues) {
  std::vector<double> v(100000, 0.5);
  v[17] = NAN;
  v[99999] = -INFINITY;
  DeviceBuffer d = Upload(v);
  auto s = DeviceValueSummary(d.as<double>(), v.size(), ctx_->stream());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->nonfinite, 2);
  v[17] = 0.5;
  v[99999] = 0.5;
  DeviceBuffer finite = Upload(v);
  s = DeviceValueSummary(finite.as<double>(), v.size(), ctx_->stream());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->nonfinite, 0);
  EXPECT_DOUBLE_EQ(s->sum, 50000.0);
}

TEST_F(DeviceChecksTest, TensorSetChecksumsSeeAOneBitChangeInAnInput) {
  auto registry =
      ProblemRegistry::LoadDir(testing::SourcePath("kernels/problems"));
  ASSERT_TRUE(registry.ok()) << registry.status();
  const v1::Problem* problem = *(*registry)->Find("gather_linear_fp32");
  const DimValues dims = {{"R", 2}, {"B", 7}, {"H", 5}, {"K", 9}};
  auto tensors = TensorSet::Allocate(*problem, dims);
  ASSERT_TRUE(tensors.ok()) << tensors.status();
  cudaStream_t s = ctx_->stream();
  ASSERT_TRUE(tensors->FillInputs(42, s).ok());
  std::vector<uint64_t> before, same, after;
  ASSERT_TRUE(tensors->InputChecksums(s, &before).ok());
  ASSERT_TRUE(tensors->InputChecksums(s, &same).ok());
  EXPECT_EQ(before, same);
  ASSERT_FALSE(before.empty());
  // Flip the lowest bit of the last byte of the first input.
  const TensorSet::Tensor& x = tensors->tensors().front();
  uint8_t byte = 0;
  char* last = static_cast<char*>(x.buffer.get()) + x.buffer.bytes() - 1;
  ASSERT_EQ(cudaMemcpy(&byte, last, 1, cudaMemcpyDeviceToHost), cudaSuccess);
  byte ^= 1;
  ASSERT_EQ(cudaMemcpy(last, &byte, 1, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_TRUE(tensors->InputChecksums(s, &after).ok());
  EXPECT_NE(after[0], before[0]);
  EXPECT_NE(tensors->DescribeInputChanges(before, after), "");
}

// gather_linear_fp32's golden kernel (kernels/problems/gather_linear_fp32/
// golden.cu) against the statement computed here, on random inputs; its
// baseline (concat + cuBLASLt with bias) against the golden.
TEST_F(DeviceChecksTest, GoldenMatchesAHostComputation) {
  auto registry =
      ProblemRegistry::LoadDir(testing::SourcePath("kernels/problems"));
  ASSERT_TRUE(registry.ok()) << registry.status();
  const v1::Problem* problem = *(*registry)->Find("gather_linear_fp32");
  const DimValues dims = {{"R", 3}, {"B", 5}, {"H", 7}, {"K", 11}};
  auto tensors = TensorSet::Allocate(*problem, dims);
  ASSERT_TRUE(tensors.ok());
  ASSERT_TRUE(tensors->FillInputs(7, ctx_->stream()).ok());
  v1::RunnerJob job;  // Outlives the reference, which borrows it.
  *job.mutable_problem() = *problem;
  const absl::Status attached =
      testing::AttachTrustedKernels(*problem, ctx_->spec().arch(), &job);
  ASSERT_TRUE(attached.ok()) << attached;
  auto ref = MakeReferenceOp(job, ctx_.get());
  ASSERT_TRUE(ref.ok()) << ref.status();
  std::map<std::string, std::vector<double>> golden;
  ASSERT_TRUE((*ref)->Golden(*tensors, &golden).ok());
  std::vector<double> x, w, bias;
  ASSERT_TRUE(
      tensors->ReadAsDouble(*tensors->Find("x"), ctx_->stream(), &x).ok());
  ASSERT_TRUE(
      tensors->ReadAsDouble(*tensors->Find("w"), ctx_->stream(), &w).ok());
  ASSERT_TRUE(
      tensors->ReadAsDouble(*tensors->Find("bias"), ctx_->stream(), &bias)
          .ok());
  const int R = 3, B = 5, H = 7, K = 11;
  ASSERT_EQ(golden["out"].size(), size_t(B * K));
  for (int b = 0; b < B; ++b) {
    for (int k = 0; k < K; ++k) {
      double acc = bias[k];
      for (int r = 0; r < R; ++r) {
        for (int h = 0; h < H; ++h) {
          acc += x[(r * B + b) * H + h] * w[k * R * H + r * H + h];
        }
      }
      EXPECT_NEAR(golden["out"][b * K + k], acc, 1e-12)
          << "b=" << b << " k=" << k;
    }
  }
  // The eager reference pipeline agrees with the golden result.
  ASSERT_TRUE((*ref)->Eager()->Prepare(*tensors).ok());
  ASSERT_TRUE((*ref)->Eager()->Run().ok());
  std::vector<double> eager;
  ASSERT_TRUE(tensors
                  ->ReadAsDouble(*(*ref)->Eager()->Output("out"),
                                 ctx_->stream(), &eager)
                  .ok());
  for (size_t i = 0; i < eager.size(); ++i) {
    EXPECT_NEAR(eager[i], golden["out"][i], 1e-4);
  }
  EXPECT_GE((*ref)->Eager()->Launches(), 2);
}

}  // namespace
}  // namespace kbench
