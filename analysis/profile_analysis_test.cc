// kbd's analysis of a profile: headroom arithmetic, roofline classification
// and deltas against the previous profile (the hint rules are in
// profile_hints_test.cc).
#include "analysis/profile_analysis.h"

#include <functional>
#include <string>
#include <vector>

#include "analysis/profile_fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::kbench::profile_fixtures::CleanLaunch;
using ::kbench::profile_fixtures::CleanProfile;
using ::kbench::profile_fixtures::Gpu;
using ::kbench::profile_fixtures::Rules;
using ::testing::HasSubstr;

// ---- Headroom.

TEST(HeadroomTest, LaunchFloorWithRoomToImprove) {
  v1::ProfileReport p = CleanProfile();
  p.set_min_bytes(8e6);  // 2 us.
  p.set_flops(1.2e8);    // 2 us.
  p.mutable_timing()->mutable_kernel()->set_median_us(12);
  AnalyzeProfile(Gpu(), &p);
  ASSERT_TRUE(p.has_headroom());
  const v1::Headroom& h = p.headroom();
  EXPECT_DOUBLE_EQ(h.memory_floor_us(), 2.0);
  EXPECT_DOUBLE_EQ(h.compute_floor_us(), 2.0);
  EXPECT_DOUBLE_EQ(h.launch_floor_us(), 3.0);
  EXPECT_DOUBLE_EQ(h.floor_us(), 3.0);
  EXPECT_EQ(h.floor_bound(), "launch");
  EXPECT_DOUBLE_EQ(h.measured_us(), 12.0);
  EXPECT_DOUBLE_EQ(h.ratio(), 4.0);
  EXPECT_FALSE(h.near_limit());
  EXPECT_EQ(h.note(),
            "12.0 us is 4.0x the 3.00 us floor (launch latency): room to "
            "improve");
}

TEST(HeadroomTest, MemoryFloorNearTheLimitFromTheTotalTime) {
  v1::ProfileReport p = CleanProfile();
  p.clear_timing();  // Falls back to the plan's total median.
  p.mutable_total()->set_median_us(15);
  p.set_min_bytes(40e6);  // 10 us.
  AnalyzeProfile(Gpu(), &p);
  const v1::Headroom& h = p.headroom();
  EXPECT_EQ(h.floor_bound(), "memory");
  EXPECT_DOUBLE_EQ(h.floor_us(), 10.0);
  EXPECT_DOUBLE_EQ(h.ratio(), 1.5);
  EXPECT_TRUE(h.near_limit());  // ratio <= 1.5.
  EXPECT_THAT(h.note(), HasSubstr("15.0 us is 1.5x the 10.0 us floor (memory"));
  EXPECT_THAT(h.note(), HasSubstr("near the limit; further gains are small"));
}

TEST(HeadroomTest, ComputeFloorAndJustOutsideTheLimit) {
  v1::ProfileReport p = CleanProfile();
  p.set_flops(6e8);  // 10 us at 60 TFLOP/s.
  p.mutable_timing()->mutable_kernel()->set_median_us(15.1);
  AnalyzeProfile(Gpu(), &p);
  EXPECT_EQ(p.headroom().floor_bound(), "compute");
  EXPECT_NEAR(p.headroom().compute_floor_us(), 10.0, 1e-9);
  EXPECT_FALSE(p.headroom().near_limit());
}

TEST(HeadroomTest, UnknownCeilingsAreSkippedAndNoFloorLeavesItUnset) {
  v1::GpuSpec gpu = Gpu();
  gpu.set_measured_launch_us(0);
  gpu.set_measured_fp32_tflops(0);
  v1::ProfileReport p = CleanProfile();
  p.set_flops(6e12);  // Would be huge; its ceiling is unknown.
  AnalyzeProfile(gpu, &p);
  EXPECT_EQ(p.headroom().floor_bound(), "memory");
  EXPECT_DOUBLE_EQ(p.headroom().compute_floor_us(), 0);
  EXPECT_DOUBLE_EQ(p.headroom().floor_us(), 1.0);

  gpu.set_measured_copy_gbps(0);
  AnalyzeProfile(gpu, &p);
  EXPECT_FALSE(p.has_headroom());
}

// ---- Roofline.

TEST(RooflineTest, MemoryBound) {
  v1::ProfileReport p = CleanProfile();
  v1::CounterProfile* c = p.mutable_launches(0)->mutable_counters();
  c->set_gpu_time_us(2);
  c->set_sm_throughput_pct(30);
  c->set_memory_throughput_pct(85);
  AnalyzeProfile(Gpu(), &p);
  ASSERT_TRUE(p.has_roofline());
  const v1::Roofline& r = p.roofline();
  EXPECT_DOUBLE_EQ(r.counted_flops(), 1e6);
  EXPECT_DOUBLE_EQ(r.dram_bytes(), 4e6);
  EXPECT_DOUBLE_EQ(r.intensity(), 0.25);
  EXPECT_DOUBLE_EQ(r.ridge_intensity(), 15.0);
  EXPECT_NEAR(r.achieved_gbps(), 2000, 1e-6);  // 4 MB in 2 us.
  EXPECT_NEAR(r.achieved_tflops(), 0.5, 1e-9);
  EXPECT_EQ(r.bound(), "memory");
  EXPECT_THAT(r.reason(),
              HasSubstr("0.25 FLOP/B is below the ridge 15 FLOP/B"));
  EXPECT_THAT(r.reason(), HasSubstr("SOL is 85%"));
}

TEST(RooflineTest, ComputeBound) {
  v1::ProfileReport p = CleanProfile();
  v1::CounterProfile* c = p.mutable_launches(0)->mutable_counters();
  c->set_flops(1e9);  // 250 FLOP/B.
  c->set_sm_throughput_pct(90);
  c->set_memory_throughput_pct(20);
  AnalyzeProfile(Gpu(), &p);
  EXPECT_EQ(p.roofline().bound(), "compute");
  EXPECT_DOUBLE_EQ(p.roofline().intensity(), 250);
  EXPECT_THAT(p.roofline().reason(), HasSubstr("TFLOP/s of the measured 60"));
}

TEST(RooflineTest, LatencyBoundBelowSixtyPercentSolTimeWeighted) {
  v1::ProfileReport p = CleanProfile();
  // 1 us at 90% SOL and 9 us at 10%: 18% time-weighted.
  v1::CounterProfile* a = p.mutable_launches(0)->mutable_counters();
  a->set_gpu_time_us(1);
  a->set_sm_throughput_pct(90);
  a->set_memory_throughput_pct(10);
  v1::LaunchProfile b = CleanLaunch("k2");
  b.mutable_counters()->set_gpu_time_us(9);
  b.mutable_counters()->set_sm_throughput_pct(10);
  b.mutable_counters()->set_memory_throughput_pct(5);
  *p.add_launches() = b;
  AnalyzeProfile(Gpu(), &p);
  EXPECT_EQ(p.roofline().bound(), "latency");
  EXPECT_THAT(p.roofline().reason(), HasSubstr("SOL is 18% (< 60%)"));
  EXPECT_DOUBLE_EQ(p.roofline().dram_bytes(), 8e6);  // Summed.
  EXPECT_DOUBLE_EQ(p.roofline().counted_flops(), 2e6);

  // At 60% it is no longer latency-bound.
  a->set_sm_throughput_pct(60);
  p.mutable_launches(1)->mutable_counters()->set_sm_throughput_pct(60);
  AnalyzeProfile(Gpu(), &p);
  EXPECT_EQ(p.roofline().bound(), "memory");
}

TEST(RooflineTest, WithoutSolFiguresUsesAchievedAgainstTheCeilings) {
  v1::ProfileReport p = CleanProfile();
  v1::MissingFigure* m = p.add_missing();
  m->set_figure("sm_throughput_pct");
  m->set_reason("not in the fast preset");
  *p.add_missing() = *m;
  p.mutable_missing(1)->set_figure("memory_throughput_pct");
  // 4 MB in 20 us = 200 GB/s = 5% of 4000 GB/s.
  AnalyzeProfile(Gpu(), &p);
  EXPECT_EQ(p.roofline().bound(), "latency");
  EXPECT_THAT(p.roofline().reason(), HasSubstr("is 5% (< 60%)"));
}

TEST(RooflineTest, UntrustedPointOrUnknownCeilingsFallBackToTheSolSides) {
  v1::ProfileReport p = CleanProfile();
  v1::CounterProfile* c = p.mutable_launches(0)->mutable_counters();
  c->set_flops(1e9);  // Would say compute-bound, but it is suspect.
  c->add_suspect("flops 1e9: more than the SMs can issue");
  c->set_sm_throughput_pct(30);
  c->set_memory_throughput_pct(85);
  AnalyzeProfile(Gpu(), &p);
  EXPECT_EQ(p.roofline().bound(), "memory");
  EXPECT_THAT(p.roofline().reason(),
              HasSubstr("SOL memory 85% vs compute 30% (FLOPs or DRAM bytes "
                        "were not counted, or are suspect)"));

  p = CleanProfile();
  c = p.mutable_launches(0)->mutable_counters();
  c->set_sm_throughput_pct(90);
  c->set_memory_throughput_pct(20);
  v1::GpuSpec gpu = Gpu();
  gpu.set_measured_copy_gbps(0);
  AnalyzeProfile(gpu, &p);
  EXPECT_EQ(p.roofline().bound(), "compute");
  EXPECT_DOUBLE_EQ(p.roofline().ridge_intensity(), 0);
  EXPECT_THAT(p.roofline().reason(),
              HasSubstr("(the GPU's measured ceilings are unknown)"));

  // Nothing to go by.
  p.add_missing()->set_figure("sm_throughput_pct");
  p.add_missing()->set_figure("memory_throughput_pct");
  p.add_missing()->set_figure("flops");
  AnalyzeProfile(gpu, &p);
  EXPECT_EQ(p.roofline().bound(), "");
  EXPECT_THAT(p.roofline().reason(), HasSubstr("not classified"));
}

TEST(RooflineTest, UnsetWithoutCounters) {
  v1::ProfileReport p = CleanProfile();
  p.mutable_launches(0)->clear_counters();
  AnalyzeProfile(Gpu(), &p);
  EXPECT_FALSE(p.has_roofline());
  EXPECT_TRUE(p.has_headroom());  // Needs no counters.
}

// ---- Deltas.

const v1::MetricDelta* FindDelta(const v1::ProfileReport& p,
                                 const std::string& figure) {
  for (const v1::MetricDelta& d : p.deltas()) {
    if (d.figure() == figure) return &d;
  }
  return nullptr;
}

TEST(DeltasTest, LowerIsBetterTimesWithANoiseThreshold) {
  const v1::ProfileReport before = CleanProfile();  // 20 us.
  v1::ProfileReport after = CleanProfile();
  after.mutable_timing()->mutable_kernel()->set_median_us(20.5);  // +2.5%.
  ComputeDeltas(before, "j-prev", &after);
  EXPECT_EQ(after.previous_job_id(), "j-prev");
  const v1::MetricDelta* d = FindDelta(after, "kernel_median_us");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->unit(), "us");
  EXPECT_DOUBLE_EQ(d->previous(), 20);
  EXPECT_DOUBLE_EQ(d->current(), 20.5);
  EXPECT_FALSE(d->higher_is_better());
  EXPECT_FALSE(d->regressed());

  after.mutable_timing()->mutable_kernel()->set_median_us(20.7);  // +3.5%.
  ComputeDeltas(before, "j-prev", &after);
  EXPECT_TRUE(FindDelta(after, "kernel_median_us")->regressed());
  after.mutable_timing()->mutable_kernel()->set_median_us(10);  // Faster.
  ComputeDeltas(before, "j-prev", &after);
  EXPECT_FALSE(FindDelta(after, "kernel_median_us")->regressed());
}

TEST(DeltasTest, HigherIsBetterRatesAndPercentagePoints) {
  const v1::ProfileReport before = CleanProfile();  // Speedup 2, L2 80%.
  v1::ProfileReport after = CleanProfile();
  after.mutable_timing()->set_speedup(1.9);
  after.mutable_launches(0)->mutable_counters()->set_l2_hit_rate_pct(79.5);
  ComputeDeltas(before, "j-prev", &after);
  const v1::MetricDelta* speedup = FindDelta(after, "speedup");
  ASSERT_NE(speedup, nullptr);
  EXPECT_TRUE(speedup->higher_is_better());
  EXPECT_TRUE(speedup->regressed());  // -5%.
  const v1::MetricDelta* l2 = FindDelta(after, "l2_hit_rate_pct");
  ASSERT_NE(l2, nullptr);
  EXPECT_TRUE(l2->higher_is_better());
  EXPECT_FALSE(l2->regressed());  // -0.5 point.

  after.mutable_launches(0)->mutable_counters()->set_l2_hit_rate_pct(78.5);
  after.mutable_launches(0)->mutable_counters()->set_achieved_occupancy_pct(95);
  ComputeDeltas(before, "j-prev", &after);
  EXPECT_TRUE(FindDelta(after, "l2_hit_rate_pct")->regressed());  // -1.5.
  EXPECT_FALSE(FindDelta(after, "achieved_occupancy_pct")->regressed());
}

TEST(DeltasTest, CountsRegressOnAnyIncrease) {
  const v1::ProfileReport before = CleanProfile();  // 32 registers.
  v1::ProfileReport after = CleanProfile();
  after.mutable_launches(0)->set_registers(33);
  ComputeDeltas(before, "j-prev", &after);
  EXPECT_TRUE(FindDelta(after, "registers")->regressed());
  after.mutable_launches(0)->set_registers(31);
  ComputeDeltas(before, "j-prev", &after);
  EXPECT_FALSE(FindDelta(after, "registers")->regressed());
}

TEST(DeltasTest, MultiLaunchPlansSumBytesAndWeightRatesByTime) {
  v1::ProfileReport before = CleanProfile();
  v1::ProfileReport after = CleanProfile();
  v1::LaunchProfile second = CleanLaunch("k2");
  second.mutable_counters()->set_gpu_time_us(60);  // 3x the first's 20 us.
  second.mutable_counters()->set_l2_hit_rate_pct(40);
  second.mutable_counters()->set_global_load_requests(1000);
  second.mutable_counters()->set_global_load_sectors(12000);
  *after.add_launches() = second;
  ComputeDeltas(before, "j-prev", &after);
  EXPECT_DOUBLE_EQ(FindDelta(after, "dram_bytes")->current(), 8e6);
  EXPECT_TRUE(FindDelta(after, "dram_bytes")->regressed());
  EXPECT_DOUBLE_EQ(FindDelta(after, "counted_gpu_time_us")->current(), 80);
  // (80 x 20 + 40 x 60) / 80 = 50.
  EXPECT_DOUBLE_EQ(FindDelta(after, "l2_hit_rate_pct")->current(), 50);
  // (4000 + 12000) sectors / 2000 requests.
  EXPECT_DOUBLE_EQ(
      FindDelta(after, "global_load_sectors_per_request")->current(), 8);
}

TEST(DeltasTest, FiguresMissingOrSuspectOnEitherSideAreSkipped) {
  v1::ProfileReport before = CleanProfile();
  before.mutable_launches(0)->clear_counters();  // No counters then.
  v1::ProfileReport after = CleanProfile();
  after.mutable_launches(0)->mutable_counters()->add_suspect(
      "l2_hit_rate_pct 108% > 100%");
  ComputeDeltas(before, "j-prev", &after);
  EXPECT_NE(FindDelta(after, "kernel_median_us"), nullptr);
  EXPECT_NE(FindDelta(after, "registers"), nullptr);
  EXPECT_EQ(FindDelta(after, "dram_bytes"), nullptr);
  EXPECT_EQ(FindDelta(after, "l2_hit_rate_pct"), nullptr);

  before = CleanProfile();
  ComputeDeltas(before, "j-prev", &after);
  EXPECT_NE(FindDelta(after, "dram_bytes"), nullptr);
  EXPECT_EQ(FindDelta(after, "l2_hit_rate_pct"), nullptr);  // Suspect now.
  v1::MissingFigure* m = before.add_missing();
  m->set_figure("achieved_occupancy_pct");
  ComputeDeltas(before, "j-prev", &after);
  EXPECT_EQ(FindDelta(after, "achieved_occupancy_pct"), nullptr);
}

}  // namespace
}  // namespace kbench
