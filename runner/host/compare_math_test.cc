// The shared per-element arithmetic (compare_math.h): a reduction in
// chunks, merged in any grouping, gives the sequential loop's figures, as
// the device's block-wise reduction relies on.
#include "runner/host/compare_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace kbench {
namespace {

struct Data {
  std::vector<double> out, ref, second;
};

// Random values with NaN, infinities and mismatches sprinkled in.
Data MakeData(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> v(-2, 2);
  std::uniform_int_distribution<int> pick(0, 99);
  Data d;
  for (int64_t i = 0; i < n; ++i) {
    const double r = v(rng);
    double o = r + 1e-6 * v(rng);
    double s = o;
    const int p = pick(rng);
    if (p == 0) o = NAN;
    if (p == 1) o = INFINITY;
    if (p == 2) o = r + 0.5;
    if (p == 3) s = NAN;
    if (p == 4) s = o + 0.25;
    if (p == 5) s = o + 1e-9;
    d.out.push_back(o);
    d.ref.push_back(r);
    d.second.push_back(s);
  }
  return d;
}

TEST(CompareMathTest, ChunkedOutputErrorsMatchTheSequentialLoop) {
  const Data d = MakeData(10007, 1);
  const double atol = 1e-4, rtol = 1e-4;
  OutputErrors seq = ZeroOutputErrors();
  for (size_t i = 0; i < d.out.size(); ++i) {
    AddOutputError(d.out[i], d.ref[i], i, atol, rtol, &seq);
  }
  EXPECT_GT(seq.mismatches, 0);
  EXPECT_GT(seq.nans, 0);
  for (int chunks : {1, 3, 64, 1000}) {
    // Chunks strided as a grid-stride loop strides, merged in block order.
    std::vector<OutputErrors> part(chunks, ZeroOutputErrors());
    for (size_t i = 0; i < d.out.size(); ++i) {
      AddOutputError(d.out[i], d.ref[i], i, atol, rtol, &part[i % chunks]);
    }
    OutputErrors merged = ZeroOutputErrors();
    for (const OutputErrors& p : part) MergeOutputErrors(p, &merged);
    EXPECT_EQ(merged.mismatches, seq.mismatches) << chunks;
    EXPECT_EQ(merged.nans, seq.nans) << chunks;
    EXPECT_EQ(merged.first, seq.first) << chunks;
    EXPECT_EQ(merged.max_abs, seq.max_abs) << chunks;
    EXPECT_EQ(merged.max_rel, seq.max_rel) << chunks;
    EXPECT_EQ(merged.diff_sq, seq.diff_sq) << chunks;  // Both +inf here.
    EXPECT_NEAR(merged.ref_sq, seq.ref_sq, 1e-9 * seq.ref_sq) << chunks;
  }
}

TEST(CompareMathTest, FiniteSumsAgreeToRoundingAndFirstIsTheSmallestIndex) {
  OutputErrors a = ZeroOutputErrors(), b = ZeroOutputErrors();
  AddOutputError(1.0, 1.5, 7, 1e-3, 1e-3, &a);
  AddOutputError(2.0, 2.0, 3, 1e-3, 1e-3, &b);
  AddOutputError(3.0, 4.0, 5, 1e-3, 1e-3, &b);
  MergeOutputErrors(b, &a);
  EXPECT_EQ(a.first, 5);
  EXPECT_EQ(a.mismatches, 2);
  EXPECT_DOUBLE_EQ(a.diff_sq, 0.25 + 1.0);
  EXPECT_DOUBLE_EQ(a.max_abs, 1.0);
  EXPECT_EQ(FirstIndex(-1, 4), 4);
  EXPECT_EQ(FirstIndex(4, -1), 4);
  EXPECT_EQ(FirstIndex(-1, -1), -1);
  // A NaN never becomes the maximum, as with std::max.
  EXPECT_EQ(MaxKeep(2.0, NAN), 2.0);
}

TEST(CompareMathTest, ChunkedRunDiffMatchesTheSequentialLoop) {
  const Data d = MakeData(5003, 2);
  RunDiff seq = ZeroRunDiff();
  for (size_t i = 0; i < d.out.size(); ++i) {
    AddRunDiff(d.out[i], d.second[i], i, 1e-4, 1e-4, &seq);
  }
  EXPECT_GT(seq.differ, seq.nan_one);
  EXPECT_GT(seq.nan_one, 0);
  std::vector<RunDiff> part(17, ZeroRunDiff());
  for (size_t i = 0; i < d.out.size(); ++i) {
    AddRunDiff(d.out[i], d.second[i], i, 1e-4, 1e-4, &part[i % 17]);
  }
  RunDiff merged = ZeroRunDiff();
  for (const RunDiff& p : part) MergeRunDiff(p, &merged);
  EXPECT_EQ(merged.differ, seq.differ);
  EXPECT_EQ(merged.nan_one, seq.nan_one);
  EXPECT_EQ(merged.first, seq.first);
  EXPECT_EQ(merged.max_abs, seq.max_abs);
}

TEST(CompareMathTest, ChecksumWordsDependOnKeyIndexAndWord) {
  EXPECT_NE(ChecksumWord(1, 0, 5), ChecksumWord(2, 0, 5));
  EXPECT_NE(ChecksumWord(1, 0, 5), ChecksumWord(1, 1, 5));
  EXPECT_NE(ChecksumWord(1, 0, 5), ChecksumWord(1, 0, 6));
  EXPECT_EQ(ChecksumWord(1, 0, 5), ChecksumWord(1, 0, 5));
}

}  // namespace
}  // namespace kbench
