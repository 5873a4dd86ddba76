// Tests of the shared measurement helpers: sample statistics
// (runner/host/sample_stats.h), the stopping criterion
// (runner/host/stopping_criterion.h), and output comparison
// (runner/host/output_compare.h).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runner/host/output_compare.h"
#include "runner/host/sample_stats.h"
#include "runner/host/stopping_criterion.h"

namespace kbench {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// ---- ComputeStats

TEST(SampleStatsTest, OddCount) {
  const v1::Stats s = ComputeStats({3.0, 1.0, 2.0, 10.0, 4.0});
  EXPECT_EQ(s.n(), 5);
  EXPECT_DOUBLE_EQ(s.mean_us(), 4.0);
  EXPECT_DOUBLE_EQ(s.median_us(), 3.0);
  EXPECT_DOUBLE_EQ(s.min_us(), 1.0);
  EXPECT_DOUBLE_EQ(s.max_us(), 10.0);
  // Squared deviations 1+9+4+36+0 = 50; sample variance 50 / 4.
  const double std_dev = std::sqrt(50.0 / 4.0);
  EXPECT_DOUBLE_EQ(s.std_us(), std_dev);
  EXPECT_DOUBLE_EQ(s.rel_stderr(), std_dev / std::sqrt(5.0) / 4.0);
}

TEST(SampleStatsTest, EvenCountMedianIsMeanOfMiddleTwo) {
  const v1::Stats s = ComputeStats({4.0, 1.0, 3.0, 2.0});
  EXPECT_EQ(s.n(), 4);
  EXPECT_DOUBLE_EQ(s.mean_us(), 2.5);
  EXPECT_DOUBLE_EQ(s.median_us(), 2.5);
  // Squared deviations 2.25+0.25+0.25+2.25 = 5; n - 1 = 3.
  EXPECT_DOUBLE_EQ(s.std_us(), std::sqrt(5.0 / 3.0));
  EXPECT_DOUBLE_EQ(s.min_us(), 1.0);
  EXPECT_DOUBLE_EQ(s.max_us(), 4.0);
}

TEST(SampleStatsTest, EvenCountUnsortedMiddle) {
  // Middle two after sorting are 10 and 20, not the middle of the input.
  const v1::Stats s = ComputeStats({100.0, 20.0, 1.0, 10.0});
  EXPECT_DOUBLE_EQ(s.median_us(), 15.0);
}

TEST(SampleStatsTest, UsesSampleStandardDeviation) {
  // Population std of {1, 3} is 1; the sample std (n - 1) is sqrt(2).
  const v1::Stats s = ComputeStats({1.0, 3.0});
  EXPECT_DOUBLE_EQ(s.std_us(), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(s.rel_stderr(), std::sqrt(2.0) / std::sqrt(2.0) / 2.0);
}

TEST(SampleStatsTest, SingleSample) {
  const v1::Stats s = ComputeStats({7.5});
  EXPECT_EQ(s.n(), 1);
  EXPECT_DOUBLE_EQ(s.mean_us(), 7.5);
  EXPECT_DOUBLE_EQ(s.median_us(), 7.5);
  EXPECT_DOUBLE_EQ(s.min_us(), 7.5);
  EXPECT_DOUBLE_EQ(s.max_us(), 7.5);
  EXPECT_DOUBLE_EQ(s.std_us(), 0.0);
  EXPECT_FALSE(std::isnan(s.rel_stderr()));
}

TEST(SampleStatsTest, EmptyInputIsAllZero) {
  const v1::Stats s = ComputeStats({});
  EXPECT_EQ(s.n(), 0);
  EXPECT_EQ(s.mean_us(), 0.0);
  EXPECT_EQ(s.median_us(), 0.0);
  EXPECT_EQ(s.std_us(), 0.0);
  EXPECT_EQ(s.min_us(), 0.0);
  EXPECT_EQ(s.max_us(), 0.0);
  EXPECT_EQ(s.rel_stderr(), 0.0);
}

// ---- StoppingCriterion

StoppingCriterion::Options CriterionOptions() {
  StoppingCriterion::Options o;
  o.min_samples = 20;
  o.max_rel_stderr = 0.005;
  o.max_samples = 1000;
  o.max_time_ms = 1000;
  return o;
}

TEST(StoppingCriterionTest, NotDoneBeforeMinSamplesEvenWithoutNoise) {
  StoppingCriterion c(CriterionOptions());
  for (int i = 0; i < 19; ++i) {
    c.Add(5.0);
    EXPECT_FALSE(c.Done(0)) << "after " << c.count() << " samples";
  }
  EXPECT_EQ(c.Reason(0), "not done");
  c.Add(5.0);
  EXPECT_EQ(c.count(), 20);
  EXPECT_DOUBLE_EQ(c.mean(), 5.0);
  EXPECT_EQ(c.rel_stderr(), 0.0);
  EXPECT_TRUE(c.Done(0));
  EXPECT_THAT(c.Reason(0), AllOf(HasSubstr("rel. std. error"),
                                 HasSubstr("0.50%"), HasSubstr("20 samples")));
}

TEST(StoppingCriterionTest, DoneWhenTheMediansRelStderrReachesTarget) {
  StoppingCriterion c(CriterionOptions());
  // 100.0, 100.1, ..., 101.9: the ranks 7 and 12 of 20 (9.5 -/+ sqrt(20)/2)
  // are 100.7 and 101.2, so the median's error is 0.25 / 100.95.
  for (int i = 0; i < 20; ++i) c.Add(100.0 + 0.1 * i);
  EXPECT_NEAR(c.rel_median_stderr(), 0.25 / 100.95, 1e-12);
  EXPECT_TRUE(c.Done(0));
  EXPECT_THAT(c.Reason(0),
              AllOf(HasSubstr("median's rel. std. error 0.25%"),
                    HasSubstr("<= 0.50%"), HasSubstr("after 20 samples")));
}

TEST(StoppingCriterionTest, BatchesFitAQuarterOfTheTimeLimit) {
  // 8 rounds of 2 ms fit a quarter of 1 s; 10 ms rounds: 25; 100 ms: 2.
  EXPECT_EQ(BatchWithinLimit(8, 2, 1000), 8);
  EXPECT_EQ(BatchWithinLimit(32, 10, 1000), 25);
  EXPECT_EQ(BatchWithinLimit(8, 100, 1000), 2);
  // A round longer than the quarter still runs, one at a time.
  EXPECT_EQ(BatchWithinLimit(8, 400, 1000), 1);
  // Unknown round time, or a batch below 1.
  EXPECT_EQ(BatchWithinLimit(8, 0, 1000), 8);
  EXPECT_EQ(BatchWithinLimit(0, 2, 1000), 1);
}

TEST(StoppingCriterionTest, RelMedianStderrFromTheOrderStatistics) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // Any order.
  // n = 100: ranks floor(49.5 - 5) = 44 and ceil(49.5 + 5) = 55, values 45
  // and 56; the median is 50.5.
  EXPECT_DOUBLE_EQ(RelMedianStderr(v), 5.5 / 50.5);
  EXPECT_DOUBLE_EQ(RelMedianStderr({7, 7, 7}), 0.0);
  EXPECT_TRUE(std::isinf(RelMedianStderr({3.0})));
  EXPECT_TRUE(std::isinf(RelMedianStderr({})));
  EXPECT_TRUE(std::isinf(RelMedianStderr({0, 0, 0})));
}

// Two modes of equal weight, 1 us apart (the reference's GEMM waiting ~1 us
// longer before it starts in some runs): the mean is known to 0.34 %, the
// median is not known at all, so sampling goes on; once one mode has most
// of the samples the median is pinned and sampling stops.
TEST(StoppingCriterionTest, ABimodalTimeIsSampledUntilItsMedianIsKnown) {
  StoppingCriterion::Options o = CriterionOptions();
  o.max_samples = 100000;
  StoppingCriterion c(o);
  for (int i = 0; i < 200; ++i) c.Add(i % 2 ? 11.0 : 10.0);
  EXPECT_LE(c.rel_stderr(), 0.005);
  EXPECT_GT(c.rel_median_stderr(), 0.04);
  EXPECT_FALSE(c.Done(0));
  for (int i = 0; i < 100; ++i) c.Add(10.0);
  EXPECT_EQ(c.rel_median_stderr(), 0.0);
  EXPECT_TRUE(c.Done(0));
  // Samples taken after the target was met (the other workloads still
  // sampling) do not change why it stopped.
  for (int i = 0; i < 10; ++i) c.Add(i % 2 ? 11.0 : 10.0);
  EXPECT_TRUE(c.Done(0));
  EXPECT_THAT(c.Reason(0), HasSubstr("0.00% <= 0.50% after 300 samples"));
}

// One stall (a preempted run) keeps the mean's error high for long; the
// median's is untouched.
TEST(StoppingCriterionTest, AnOutlierDoesNotKeepSamplingGoing) {
  StoppingCriterion c(CriterionOptions());
  for (int i = 0; i < 19; ++i) c.Add(5.0);
  c.Add(500.0);
  EXPECT_GT(c.rel_stderr(), 0.1);
  EXPECT_TRUE(c.Done(0));
}

TEST(StoppingCriterionTest, FromJobTakesTheJobsCriterionAndItsDefaults) {
  // An unset criterion (a job made by hand) times as kbd's defaults do.
  const StoppingCriterion::Options d =
      StoppingCriterion::FromJob(v1::StoppingCriterion());
  const StoppingCriterion::Options plain;
  EXPECT_EQ(d.max_rel_stderr, kDefaultMaxRelStderr);
  EXPECT_EQ(d.min_samples, kDefaultMinSamples);
  EXPECT_EQ(d.max_time_ms, kDefaultMaxTimeMs);
  EXPECT_EQ(d.max_samples, plain.max_samples);
  EXPECT_EQ(plain.min_samples, kDefaultMinSamples);
  v1::StoppingCriterion job;
  job.set_min_samples(300);
  job.set_max_time_ms(20000);
  const StoppingCriterion::Options o = StoppingCriterion::FromJob(job);
  EXPECT_EQ(o.min_samples, 300);
  EXPECT_EQ(o.max_time_ms, 20000);
  EXPECT_EQ(o.max_rel_stderr, kDefaultMaxRelStderr);
}

TEST(StoppingCriterionTest, NotDoneWhileNoisy) {
  StoppingCriterion c(CriterionOptions());
  // Alternating 1 and 3: rel. stderr after 40 samples ~8%.
  for (int i = 0; i < 40; ++i) c.Add(i % 2 ? 3.0 : 1.0);
  EXPECT_GT(c.rel_stderr(), 0.05);
  EXPECT_FALSE(c.Done(10));
  EXPECT_EQ(c.Reason(10), "not done");
}

TEST(StoppingCriterionTest, DoneAtMaxSamples) {
  StoppingCriterion::Options o = CriterionOptions();
  o.max_samples = 5;
  StoppingCriterion c(o);
  for (int i = 0; i < 4; ++i) c.Add(i % 2 ? 3.0 : 1.0);
  EXPECT_FALSE(c.Done(0));
  c.Add(1.0);
  EXPECT_TRUE(c.Done(0));
  EXPECT_THAT(c.Reason(0), HasSubstr("sample cap of 5"));
}

TEST(StoppingCriterionTest, DoneWhenTimeBudgetSpent) {
  StoppingCriterion c(CriterionOptions());
  for (int i = 0; i < 3; ++i) c.Add(i % 2 ? 3.0 : 1.0);
  EXPECT_FALSE(c.Done(999));
  EXPECT_TRUE(c.Done(1000));
  EXPECT_TRUE(c.Done(5000));
  EXPECT_THAT(c.Reason(1000), AllOf(HasSubstr("time budget of 1000 ms"),
                                    HasSubstr("after 3 samples")));
}

TEST(StoppingCriterionTest, TimeBudgetNeedsOneSample) {
  StoppingCriterion c(CriterionOptions());
  EXPECT_FALSE(c.Done(1e9));
  EXPECT_EQ(c.Reason(1e9), "not done");
  EXPECT_EQ(c.count(), 0);
  EXPECT_EQ(c.mean(), 0.0);
  c.Add(2.0);
  EXPECT_TRUE(c.Done(1e9));
  EXPECT_THAT(c.Reason(1e9),
              AllOf(HasSubstr("time budget"), HasSubstr("after 1 sample")));
}

TEST(StoppingCriterionTest, RelStderrIsInfiniteBelowTwoSamples) {
  StoppingCriterion c(CriterionOptions());
  EXPECT_TRUE(std::isinf(c.rel_stderr()));
  c.Add(4.0);
  EXPECT_TRUE(std::isinf(c.rel_stderr()));
  c.Add(6.0);
  // std of {4, 6} is sqrt(2); mean 5.
  EXPECT_NEAR(c.rel_stderr(), std::sqrt(2.0) / std::sqrt(2.0) / 5.0, 1e-12);
}

// ---- CompareOutput

v1::Tolerance Fp32Tolerance() {
  v1::Tolerance t;
  t.set_atol(1e-3);
  t.set_rtol(1e-3);
  t.set_max_rel_norm(1e-5);
  return t;
}

std::vector<double> RandomishRef(int n) {
  std::vector<double> ref(n);
  for (int i = 0; i < n; ++i) ref[i] = std::sin(0.7 * i + 0.3) * (1 + i % 5);
  return ref;
}

TEST(OutputCompareTest, ExactMatchPasses) {
  const std::vector<double> ref = RandomishRef(12);
  v1::TrialResult t;
  CompareOutput(ref.data(), ref.data(), 12, Fp32Tolerance(),
                {{3, 4}, {"b", "k"}}, &t);
  EXPECT_TRUE(t.passed());
  EXPECT_EQ(t.mismatches(), 0);
  EXPECT_EQ(t.elements(), 12);
  EXPECT_EQ(t.nan_count(), 0);
  EXPECT_EQ(t.max_abs_error(), 0.0);
  EXPECT_EQ(t.max_rel_error(), 0.0);
  EXPECT_EQ(t.rel_norm_error(), 0.0);
  EXPECT_EQ(t.first_mismatch(), "");
}

TEST(OutputCompareTest, OneElementOutsideToleranceFails) {
  std::vector<double> ref(12);
  for (int i = 0; i < 12; ++i) ref[i] = 1.0 + i;
  std::vector<double> out = ref;
  v1::Tolerance tol = Fp32Tolerance();
  tol.set_max_rel_norm(1.0);  // Only the element test decides.
  // Element 3 (b=0 k=3, ref 4): just inside atol + rtol * |ref| = 0.005.
  out[3] = ref[3] + 0.0049;
  // Element 6 (b=1 k=2, ref 7): allowed 0.008; off by 0.009.
  out[6] = ref[6] - 0.009;
  v1::TrialResult t;
  CompareOutput(out.data(), ref.data(), 12, tol, {{3, 4}, {"b", "k"}}, &t);
  EXPECT_FALSE(t.passed());
  EXPECT_EQ(t.mismatches(), 1);
  EXPECT_EQ(t.elements(), 12);
  EXPECT_EQ(t.nan_count(), 0);
  EXPECT_EQ(t.first_mismatch(), "b=1 k=2");
  EXPECT_NEAR(t.max_abs_error(), 0.009, 1e-12);
  EXPECT_NEAR(t.max_rel_error(), 0.009 / 7.0, 1e-12);
}

TEST(OutputCompareTest, WithinElementToleranceButOverRelNormFails) {
  std::vector<double> ref(12, 1.0);
  std::vector<double> out(12, 1.0005);  // Each within atol; norm 5e-4.
  v1::TrialResult t;
  CompareOutput(out.data(), ref.data(), 12, Fp32Tolerance(),
                {{3, 4}, {"b", "k"}}, &t);
  EXPECT_EQ(t.mismatches(), 0);
  EXPECT_NEAR(t.rel_norm_error(), 5e-4, 1e-12);
  EXPECT_FALSE(t.passed());
  EXPECT_EQ(t.first_mismatch(), "");
}

TEST(OutputCompareTest, NanFails) {
  std::vector<double> ref = RandomishRef(12);
  std::vector<double> out = ref;
  out[5] = std::numeric_limits<double>::quiet_NaN();
  out[9] = std::numeric_limits<double>::quiet_NaN();
  v1::TrialResult t;
  CompareOutput(out.data(), ref.data(), 12, Fp32Tolerance(),
                {{3, 4}, {"b", "k"}}, &t);
  EXPECT_FALSE(t.passed());
  EXPECT_EQ(t.nan_count(), 2);
  EXPECT_EQ(t.mismatches(), 2);
  EXPECT_EQ(t.first_mismatch(), "b=1 k=1");
}

TEST(OutputCompareTest, InfFails) {
  std::vector<double> ref = RandomishRef(12);
  std::vector<double> out = ref;
  out[11] = std::numeric_limits<double>::infinity();
  v1::TrialResult t;
  CompareOutput(out.data(), ref.data(), 12, Fp32Tolerance(),
                {{3, 4}, {"b", "k"}}, &t);
  EXPECT_FALSE(t.passed());
  EXPECT_EQ(t.nan_count(), 0);
  EXPECT_EQ(t.mismatches(), 1);
  EXPECT_EQ(t.first_mismatch(), "b=2 k=3");
  EXPECT_TRUE(std::isinf(t.max_abs_error()));
}

TEST(OutputCompareTest, RelNormErrorKnownCase) {
  // ref (3, 4): norm 5; out - ref = (0, 0.5): norm 0.5.
  const std::vector<double> ref = {3.0, 4.0};
  const std::vector<double> out = {3.0, 4.5};
  v1::TrialResult t;
  CompareOutput(out.data(), ref.data(), 2, Fp32Tolerance(), {{2}, {"i"}}, &t);
  EXPECT_DOUBLE_EQ(t.rel_norm_error(), 0.1);
  EXPECT_DOUBLE_EQ(t.max_abs_error(), 0.5);
  EXPECT_DOUBLE_EQ(t.max_rel_error(), 0.5 / 4.0);
  EXPECT_EQ(t.mismatches(), 1);
  EXPECT_EQ(t.first_mismatch(), "i=1");
  EXPECT_FALSE(t.passed());
}

TEST(OutputCompareTest, ConstantOrZeroOutputFails) {
  const int n = 64;
  const std::vector<double> ref = RandomishRef(n);
  double mean = 0;
  for (double r : ref) mean += r;
  mean /= n;
  const OutputLayout layout{{8, 8}, {"r", "c"}};

  const std::vector<double> constant(n, mean);
  v1::TrialResult t;
  CompareOutput(constant.data(), ref.data(), n, Fp32Tolerance(), layout, &t);
  EXPECT_FALSE(t.passed());
  EXPECT_GT(t.mismatches(), n / 2);
  EXPECT_GT(t.rel_norm_error(), 0.5);

  const std::vector<double> zeros(n, 0.0);
  v1::TrialResult z;
  CompareOutput(zeros.data(), ref.data(), n, Fp32Tolerance(), layout, &z);
  EXPECT_FALSE(z.passed());
  EXPECT_GT(z.mismatches(), n / 2);
  EXPECT_DOUBLE_EQ(z.rel_norm_error(), 1.0);
  EXPECT_NE(z.first_mismatch(), "");
}

// GELU at x = -5 with one element, as an H100 run of the example saw it:
// the fp32 result is off by 19 % of a reference of 3.6e-7, inside atol but
// a rel-norm of 0.19 with no floor. With the problem's floor the norm test
// is relative to the floor, and a large error still fails.
TEST(OutputCompareTest, NormFloorForAnAllTailOutput) {
  const double ref = -3.62e-7;
  const double out = ref + 6.84e-8;
  v1::Tolerance tol = Fp32Tolerance();
  v1::TrialResult t;
  CompareOutput(&out, &ref, 1, tol, {{1}, {"i"}}, &t);
  EXPECT_FALSE(t.passed());
  EXPECT_NEAR(t.rel_norm_error(), 0.189, 1e-3);
  tol.set_norm_floor(0.25);
  CompareOutput(&out, &ref, 1, tol, {{1}, {"i"}}, &t);
  EXPECT_TRUE(t.passed()) << t.rel_norm_error();
  EXPECT_NEAR(t.rel_norm_error(), 6.84e-8 / 0.25, 1e-12);
  // The floor scales with sqrt(n): four such elements, same per-element
  // figures.
  const std::vector<double> refs(4, ref), outs(4, out);
  CompareOutput(outs.data(), refs.data(), 4, tol, {{4}, {"i"}}, &t);
  EXPECT_NEAR(t.rel_norm_error(), 6.84e-8 / 0.25, 1e-12);
  // Above the floor, the test is relative to ||ref|| as before.
  const std::vector<double> big = RandomishRef(12);
  std::vector<double> off = big;
  for (double& v : off) v *= 1 + 5e-5;  // Inside rtol, 5e-5 of the norm.
  CompareOutput(off.data(), big.data(), 12, tol, {{12}, {"i"}}, &t);
  EXPECT_FALSE(t.passed());
  EXPECT_NEAR(t.rel_norm_error(), 5e-5, 1e-9);
}

TEST(OutputCompareTest, IndexNames) {
  v1::TensorSpec bk;
  bk.add_shape("B");
  bk.add_shape("K");
  EXPECT_THAT(IndexNames(bk), ElementsAre("b", "k"));

  v1::TensorSpec product;
  product.add_shape("R*H");
  EXPECT_THAT(IndexNames(product), ElementsAre("i0"));

  v1::TensorSpec mixed;
  mixed.add_shape("N");
  mixed.add_shape("2*D");
  mixed.add_shape("Head_Dim");
  EXPECT_THAT(IndexNames(mixed), ElementsAre("n", "i1", "head_dim"));
}

}  // namespace
}  // namespace kbench
