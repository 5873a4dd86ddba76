// Host-side pieces of the runner's hardening: guard regions, input
// checksums, twice-run comparison, the tolerance sanity check, the time
// floor and clock throttling.
#include "runner/host/run_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kbench/v1/problem.pb.h"
#include "runner/host/guard_pattern.h"
#include "runner/host/output_compare.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::Tolerance Fp32Tol() {
  v1::Tolerance t;
  t.set_atol(1e-3);
  t.set_rtol(1e-3);
  t.set_max_rel_norm(1e-5);
  return t;
}

TEST(GuardPatternTest, IntactRegionsReportNothing) {
  const auto before = GuardPattern(false), after = GuardPattern(true);
  EXPECT_EQ(before.size(), kGuardBytes);
  EXPECT_NE(before, after);
  EXPECT_EQ(kGuardBytes % 256, 0u);
  EXPECT_EQ(CheckGuard(before, false).bytes, 0);
  EXPECT_EQ(DescribeGuardDamage("out", 224, before, after), "");
}

TEST(GuardPatternTest, NoAlignedWordIsZeroOrOne) {
  for (bool side : {false, true}) {
    const auto p = GuardPattern(side);
    for (size_t i = 0; i + 4 <= p.size(); i += 4) {
      uint32_t w;
      memcpy(&w, &p[i], 4);
      EXPECT_NE(w, 0u);
      EXPECT_NE(w, 0x3f800000u);
      EXPECT_NE(w, 0x7fc00000u);
    }
  }
}

TEST(GuardPatternTest, WritePastTheEndIsNamedWithBytesAndSide) {
  auto before = GuardPattern(false), after = GuardPattern(true);
  // Four floats past the end of `out` (224 bytes), written as 0.
  for (int i = 0; i < 16; ++i) after[i] = 0;
  const GuardDamage d = CheckGuard(after, true);
  EXPECT_EQ(d.bytes, 16);
  EXPECT_EQ(d.first, 0);
  EXPECT_EQ(d.last, 15);
  const std::string m = DescribeGuardDamage("out", 224, before, after);
  EXPECT_THAT(m, HasSubstr("out of bounds"));
  EXPECT_THAT(m, HasSubstr("'out'"));
  EXPECT_THAT(m, HasSubstr("16 bytes changed past its end"));
  EXPECT_THAT(m, HasSubstr("bytes 0..15 after its 224 bytes"));
  EXPECT_THAT(m, Not(HasSubstr("before its start")));
}

TEST(GuardPatternTest, WriteBeforeTheStartCountsBackwards) {
  auto before = GuardPattern(false), after = GuardPattern(true);
  before[kGuardBytes - 1] ^= 1;  // The byte just before the tensor.
  before[kGuardBytes - 8] ^= 1;
  const GuardDamage d = CheckGuard(before, false);
  EXPECT_EQ(d.bytes, 2);
  EXPECT_EQ(d.first, -1);
  EXPECT_EQ(d.last, -8);
  const std::string m = DescribeGuardDamage("x", 64, before, after);
  EXPECT_THAT(m, HasSubstr("2 bytes changed before its start (bytes 1..8"));
}

TEST(RunChecksTest, KeyedChecksumSeesOneBitFlip) {
  std::vector<float> x(1000, 0.5f);
  const uint64_t key = 0x1234;
  const uint64_t a = KeyedChecksum(x.data(), x.size() * 4, key);
  EXPECT_EQ(a, KeyedChecksum(x.data(), x.size() * 4, key));
  x[999] = std::nextafter(0.5f, 1.0f);
  const uint64_t b = KeyedChecksum(x.data(), x.size() * 4, key);
  EXPECT_NE(a, b);
  EXPECT_EQ(DescribeInputChange("x", a, a), "");
  const std::string m = DescribeInputChange("x", a, b);
  EXPECT_THAT(m, HasSubstr("modified input 'x'"));
  EXPECT_THAT(m, HasSubstr("read-only"));
}

TEST(RunChecksTest, KeyedChecksumDependsOnKeyPositionAndTail) {
  std::vector<uint8_t> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const uint64_t a = KeyedChecksum(x.data(), x.size(), 7);
  // Another key gives another sum: a kernel cannot precompute it.
  EXPECT_NE(a, KeyedChecksum(x.data(), x.size(), 8));
  // Swapping two words changes it (the sum is keyed by position).
  std::vector<uint8_t> swapped = {5, 6, 7, 8, 1, 2, 3, 4, 9};
  EXPECT_NE(a, KeyedChecksum(swapped.data(), swapped.size(), 7));
  // The last, partial word counts.
  x[8] = 10;
  EXPECT_NE(a, KeyedChecksum(x.data(), x.size(), 7));
  // Bytes past `n` do not.
  std::vector<uint8_t> longer = x;
  longer.push_back(99);
  EXPECT_EQ(KeyedChecksum(x.data(), x.size(), 7),
            KeyedChecksum(longer.data(), x.size(), 7));
}

TEST(RunChecksTest, CompareRunsAcceptsEqualAndReportsRaces) {
  OutputLayout layout{{2, 3}, {"b", "k"}};
  std::vector<double> a = {1, 2, 3, 4, 5, 6}, b = a;
  EXPECT_EQ(CompareRuns(a.data(), b.data(), 6, Fp32Tol(), layout, true), "");
  b[4] += 1e-7;  // Within tolerance (atomics reorder sums).
  EXPECT_EQ(CompareRuns(a.data(), b.data(), 6, Fp32Tol(), layout, true), "");
  b[4] = 7.5;
  b[5] = NAN;
  const std::string m =
      CompareRuns(a.data(), b.data(), 6, Fp32Tol(), layout, true);
  EXPECT_THAT(m, HasSubstr("the two runs of the same inputs differed"));
  EXPECT_THAT(m, HasSubstr("2 of 6 elements"));
  EXPECT_THAT(m, HasSubstr("max abs difference 2.5"));
  EXPECT_THAT(m, HasSubstr("1 written in one run only"));
  EXPECT_THAT(m, HasSubstr("first at b=1 k=1"));
  const std::string hidden =
      CompareRuns(a.data(), b.data(), 6, Fp32Tol(), layout, false);
  EXPECT_THAT(hidden, Not(HasSubstr("first at")));
}

TEST(RunChecksTest, SanityCheckPassesForAGoodToleranceAndWideInputs) {
  std::vector<double> golden(100);
  for (int i = 0; i < 100; ++i) golden[i] = (i % 7 - 3) * 0.37 + 0.01 * i;
  EXPECT_TRUE(SanityCheckTolerance(golden.data(), golden.size(), Fp32Tol(),
                                   "default/orig")
                  .ok());
}

v1::Stats Median(double us) {
  v1::Stats s;
  s.set_median_us(us);
  s.set_n(20);
  return s;
}

TEST(RunChecksTest, SpeedupIsOnGpuTimeWhenBothSidesHaveIt) {
  v1::TimingReport t;
  *t.mutable_kernel() = Median(12);
  *t.mutable_reference() = Median(15);
  SetSpeedups(&t);
  EXPECT_EQ(t.speedup_basis(), v1::TIMING_BASIS_EVENTS);
  EXPECT_DOUBLE_EQ(t.speedup(), 1.25);
  EXPECT_DOUBLE_EQ(t.speedup_gpu(), 0);
  *t.mutable_kernel_gpu() = Median(9);  // The reference's is missing.
  SetSpeedups(&t);
  EXPECT_EQ(t.speedup_basis(), v1::TIMING_BASIS_EVENTS);
  *t.mutable_reference_gpu() = Median(6);
  *t.mutable_kernel_graph() = Median(8);
  *t.mutable_reference_graph() = Median(4);
  SetSpeedups(&t);
  EXPECT_EQ(t.speedup_basis(), v1::TIMING_BASIS_GPU_TIME);
  EXPECT_DOUBLE_EQ(t.speedup(), 6.0 / 9.0);
  EXPECT_DOUBLE_EQ(t.speedup_events(), 1.25);
  EXPECT_DOUBLE_EQ(t.speedup_graph(), 0.5);
  EXPECT_DOUBLE_EQ(t.speedup_vs_expert(), 0);  // No expert baseline.
  // Against the expert on the speedup's basis: GPU time, not events.
  *t.mutable_expert() = Median(3);
  *t.mutable_expert_gpu() = Median(4.5);
  SetSpeedups(&t);
  EXPECT_DOUBLE_EQ(t.speedup_vs_expert(), 0.5);
  t.clear_kernel_gpu();  // Events then, for both ratios.
  SetSpeedups(&t);
  EXPECT_EQ(t.speedup_basis(), v1::TIMING_BASIS_EVENTS);
  EXPECT_DOUBLE_EQ(t.speedup_vs_expert(), 3.0 / 12.0);
}

// One element is its own mean: no tolerance can reject the constant, so
// tiny outputs are not judged (a hidden case may be B = K = 1).
TEST(RunChecksTest, SanityCheckSkipsTinyOutputs) {
  const std::vector<double> one = {1.99324};
  EXPECT_TRUE(SanityCheckTolerance(one.data(), 1, Fp32Tol(), "(hidden)").ok());
  std::vector<double> sixteen(kMinSanityElements, 1.99324);
  EXPECT_EQ(SanityCheckTolerance(sixteen.data(), sixteen.size(), Fp32Tol(),
                                 "(hidden)")
                .code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(RunChecksTest, SanityCheckCatchesALooseTolerance) {
  std::vector<double> golden(50, 0.0);
  for (int i = 0; i < 50; ++i) golden[i] = 1e-4 * (i % 3);
  // Tiny outputs under an elementwise atol, and a rel-norm bound of 2: a
  // zero output passes both. The rel-norm bound of 1e-5 alone catches it.
  v1::Tolerance weak = Fp32Tol();
  weak.set_max_rel_norm(2);
  EXPECT_TRUE(
      SanityCheckTolerance(golden.data(), golden.size(), Fp32Tol(), "odd/b7")
          .ok());
  absl::Status s =
      SanityCheckTolerance(golden.data(), golden.size(), weak, "odd/b7");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("the problem's check is too weak on shape odd/b7"));
  // A loose tolerance lets a zero output pass a constant golden.
  std::vector<double> flat(50, 3.0);
  v1::Tolerance loose;
  loose.set_atol(10);
  loose.set_rtol(0);
  loose.set_max_rel_norm(10);
  EXPECT_FALSE(SanityCheckTolerance(flat.data(), flat.size(), loose, "x").ok());
}

TEST(RunChecksTest, FloorUsesTheFasterOfMeasuredAndDatasheet) {
  v1::GpuSpec spec;
  EXPECT_EQ(PhysicalFloorUs(1e9, 1e9, spec), 0);
  spec.set_datasheet_memory_gbps(4800);
  spec.set_datasheet_fp32_tflops(67);
  spec.set_measured_copy_gbps(4000);
  // 4.8e9 bytes at 4800 GB/s = 1000 us; 6.7e10 FLOP at 67 TF = 1000 us.
  EXPECT_NEAR(PhysicalFloorUs(0, 4.8e9, spec), 1000, 1e-6);
  EXPECT_NEAR(PhysicalFloorUs(6.7e11, 4.8e9, spec), 10000, 1e-6);
  // Half precision: the tensor-core peak, and no compute floor unknown it
  // (6.7e11 FLOP of a bf16 GEMM take 677 us at 989 TF, not 10 ms).
  EXPECT_NEAR(PhysicalFloorUs(6.7e11, 4.8e9, spec, true), 1000, 1e-6);
  spec.set_datasheet_bf16_tflops(989);
  EXPECT_NEAR(PhysicalFloorUs(6.7e12, 0, spec, true), 6.7e12 / 989e12 * 1e6,
              1e-6);
  EXPECT_EQ(CheckTimeFloor(950, 1000), "");
  EXPECT_EQ(CheckTimeFloor(5, 0), "");
  EXPECT_THAT(CheckTimeFloor(800, 1000),
              HasSubstr("impossible: faster than the physical floor"));
}

TEST(RunChecksTest, TimedOutputWrongGivesTheFiguresAndWhatToDo) {
  v1::TrialResult check;
  check.set_mismatches(12);
  check.set_elements(4096);
  check.set_max_abs_error(0.5);
  check.set_rel_norm_error(0.0625);
  check.set_nan_count(3);
  EXPECT_EQ(
      DescribeTimedOutputWrong("the last timed run",
                               "default/n4096 (N=4096), rank 1 of 2", check),
      "the output of the timed runs was wrong (the last timed run) on "
      "default/n4096 (N=4096), rank 1 of 2: 12 of 4096 outputs outside "
      "tolerance (max abs error 0.5, rel-norm error 0.0625, 3 NaN or "
      "unwritten). The kernel must compute the full result on every "
      "call");
}

TEST(RunChecksTest, ThrottleNote) {
  EXPECT_EQ(ThrottleNote(1980, 1975, 1980), "");
  EXPECT_EQ(ThrottleNote(0, 0, 1980), "");
  EXPECT_THAT(ThrottleNote(1980, 1500, 1980),
              HasSubstr("clock dropped from 1980 to 1500 MHz during timing: "
                        "results may be pessimistic"));
  EXPECT_THAT(ThrottleNote(1000, 990, 1980), HasSubstr("far below"));
}

TEST(OutputCompareTest, NaNAndInfNeverPassAndTheNormBoundApplies) {
  v1::Tolerance huge;
  huge.set_atol(1e30);
  huge.set_rtol(1e30);
  huge.set_max_rel_norm(1e30);
  const std::vector<double> ref = {1, 2, 3};
  v1::TrialResult t;
  std::vector<double> out = {1, NAN, 3};
  CompareOutput(out.data(), ref.data(), 3, huge, OutputLayout{}, &t);
  EXPECT_FALSE(t.passed());
  EXPECT_EQ(t.nan_count(), 1);
  out = {1, INFINITY, 3};
  CompareOutput(out.data(), ref.data(), 3, huge, OutputLayout{}, &t);
  EXPECT_FALSE(t.passed());
  // Every element within atol, but the relative norm is too large.
  v1::Tolerance tol = Fp32Tol();
  tol.set_atol(0.5);
  out = {1.4, 2.4, 3.4};
  CompareOutput(out.data(), ref.data(), 3, tol, OutputLayout{}, &t);
  EXPECT_EQ(t.mismatches(), 0);
  EXPECT_FALSE(t.passed());
}

}  // namespace
}  // namespace kbench
