// kbd's analysis of a profile: headroom arithmetic, roofline classification,
// the hint rules around their thresholds (and their silence on suspect or
// missing figures), deltas against the previous profile, and the preset
// check.
#include "common/profile_analysis.h"

#include <functional>
#include <string>
#include <vector>

#include "common/profile_hints.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

// An H200-like GPU: 4000 GB/s, 60 TFLOP/s (ridge 15 FLOP/B), 3 us launch.
v1::GpuSpec Gpu() {
  v1::GpuSpec g;
  g.set_sm_count(132);
  g.set_warp_size(32);
  g.set_max_threads_per_sm(2048);
  g.set_max_blocks_per_sm(32);
  g.set_regs_per_sm(65536);
  g.set_smem_per_sm_bytes(233472);
  g.set_measured_copy_gbps(4000);
  g.set_measured_fp32_tflops(60);
  g.set_measured_launch_us(3);
  return g;
}

// One launch on which no rule fires: 264 blocks of 256 threads (2 per SM,
// exactly 1 wave), coalesced, well occupied, no stalls to speak of.
v1::LaunchProfile CleanLaunch(const std::string& entry = "k") {
  v1::LaunchProfile l;
  l.set_entry(entry);
  l.add_grid(264);
  l.add_grid(1);
  l.add_grid(1);
  l.add_block(256);
  l.add_block(1);
  l.add_block(1);
  l.set_registers(32);
  l.set_blocks_per_sm(2);
  l.set_theoretical_occupancy_pct(100);
  l.set_waves(1.0);
  l.mutable_time()->set_median_us(20);
  l.set_share_pct(100);
  v1::CounterProfile* c = l.mutable_counters();
  c->set_gpu_time_us(20);
  c->set_dram_read_bytes(3e6);
  c->set_dram_write_bytes(1e6);
  c->set_dram_pct_of_peak(30);
  c->set_l1_hit_rate_pct(10);
  c->set_l2_hit_rate_pct(80);
  c->set_fma_pipe_pct(20);
  c->set_achieved_occupancy_pct(80);
  c->set_eligible_warps_per_cycle(2);
  c->set_active_warps_per_cycle(12);
  c->set_issue_slot_pct(30);
  c->set_global_load_requests(1000);
  c->set_global_load_sectors(4000);
  c->set_global_load_sectors_per_request(4);
  c->set_global_store_requests(250);
  c->set_global_store_sectors(1000);
  c->set_global_store_sectors_per_request(4);
  c->set_smem_bank_conflict_pct(0);
  c->set_sm_throughput_pct(70);
  c->set_memory_throughput_pct(70);
  c->set_flops(1e6);
  v1::StallReason* s = l.add_top_stalls();
  s->set_reason("long_scoreboard");
  s->set_share_pct(20);
  return l;
}

// A plan of one clean launch, far from its floor (20 us vs 3 us).
v1::ProfileReport CleanProfile() {
  v1::ProfileReport p;
  *p.add_launches() = CleanLaunch();
  p.set_min_bytes(4e6);  // 1 us at 4000 GB/s.
  p.set_flops(6e6);      // 0.1 us at 60 TFLOP/s.
  p.mutable_timing()->mutable_kernel()->set_median_us(20);
  p.mutable_timing()->set_speedup(2.0);
  p.set_preset("full");
  return p;
}

std::vector<std::string> Rules(const v1::ProfileReport& p) {
  std::vector<std::string> ids;
  for (const v1::ProfileHint& h : p.hints()) ids.push_back(h.rule());
  return ids;
}

const v1::ProfileHint* FindHint(const v1::ProfileReport& p,
                                const std::string& rule) {
  for (const v1::ProfileHint& h : p.hints()) {
    if (h.rule() == rule) return &h;
  }
  return nullptr;
}

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

// ---- Hints.

TEST(HintsTest, CleanLaunchFiresNothing) {
  v1::ProfileReport p = CleanProfile();
  AnalyzeProfile(Gpu(), &p);
  EXPECT_TRUE(p.hints().empty()) << p.DebugString();
}

struct RuleCase {
  std::string rule;
  std::string metric;
  // Sets the figure of the launch (and whatever the case needs).
  std::function<void(v1::LaunchProfile*, double)> set;
  double quiet;  // At the threshold: does not fire.
  double fires;  // Just past it.
  std::string threshold;
  std::string message_part;
};

std::vector<RuleCase> RuleCases() {
  auto counter = [](void (v1::CounterProfile::*setter)(double)) {
    return [setter](v1::LaunchProfile* l, double v) {
      (l->mutable_counters()->*setter)(v);
    };
  };
  return {
      {"uncoalesced_loads", "global_load_sectors_per_request",
       counter(&v1::CounterProfile::set_global_load_sectors_per_request), 8,
       8.5, "> 8 sectors/request",
       "consecutive threads should read consecutive addresses"},
      {"uncoalesced_stores", "global_store_sectors_per_request",
       counter(&v1::CounterProfile::set_global_store_sectors_per_request), 8,
       16, "> 8 sectors/request",
       "consecutive threads should write consecutive addresses"},
      {"low_achieved_occupancy", "achieved_occupancy_pct",
       counter(&v1::CounterProfile::set_achieved_occupancy_pct), 25, 24.9,
       "< 25%", "although 50% or more could be"},
      {"low_theoretical_occupancy", "theoretical_occupancy_pct",
       [](v1::LaunchProfile* l, double v) {
         l->set_theoretical_occupancy_pct(v);
         l->set_registers(255);  // 8160 -> 8192 per warp x 8 warps: 1/SM.
       },
       25, 12.5, "< 25%",
       "the limiter is registers (255 per thread), allowing 1 blocks/SM"},
      {"low_eligible_warps", "eligible_warps_per_cycle",
       counter(&v1::CounterProfile::set_eligible_warps_per_cycle), 1, 0.9,
       "< 1 warps/cycle per scheduler", "not enough ready warps"},
      {"smem_bank_conflicts", "smem_bank_conflict_pct",
       counter(&v1::CounterProfile::set_smem_bank_conflict_pct), 10, 10.5,
       "> 10% of wavefronts", "pad shared arrays"},
      {"register_spills", "local_bytes",
       [](v1::LaunchProfile* l, double v) {
         l->set_local_bytes(static_cast<int64_t>(v));
       },
       0, 16, "> 0 B/thread", "16 B of local memory per thread"},
      {"tail_effect", "last_wave_fill_pct",
       [](v1::LaunchProfile* l, double v) { l->set_waves(1 + v / 100); }, 50,
       25, "< 50% of a wave",
       "1.25 waves of 264 blocks: the last wave fills only 25%"},
      {"tiny_grid", "sm_fill_pct",
       [](v1::LaunchProfile* l, double v) {
         l->set_grid(0, static_cast<int64_t>(v * 132 / 100));
       },
       100, 50, "< 100% of SMs", "66 blocks: only 66 of 132 SMs busy"},
      {"dram_bound", "dram_pct_of_peak",
       counter(&v1::CounterProfile::set_dram_pct_of_peak), 60, 61,
       "> 60% of peak", "reduce bytes: reuse data through shared memory"},
      {"long_scoreboard", "stall_long_scoreboard_pct",
       [](v1::LaunchProfile* l, double v) {
         l->mutable_top_stalls(0)->set_share_pct(v);
       },
       40, 41, "> 40% of stalls", "prefetch earlier"},
      {"fma_bound", "fma_pipe_pct",
       counter(&v1::CounterProfile::set_fma_pipe_pct), 60, 75, "> 60% of peak",
       "tensor cores"},
      {"issue_bound", "issue_slot_pct",
       counter(&v1::CounterProfile::set_issue_slot_pct), 80, 90,
       "> 80% of issue slots", "cut instructions"},
  };
}

TEST(HintsTest, EachRuleFiresJustPastItsThresholdAndNotAtIt) {
  for (const RuleCase& rc : RuleCases()) {
    SCOPED_TRACE(rc.rule);
    v1::ProfileReport p = CleanProfile();
    rc.set(p.mutable_launches(0), rc.quiet);
    AnalyzeProfile(Gpu(), &p);
    EXPECT_EQ(FindHint(p, rc.rule), nullptr) << p.DebugString();

    p = CleanProfile();
    rc.set(p.mutable_launches(0), rc.fires);
    AnalyzeProfile(Gpu(), &p);
    const v1::ProfileHint* h = FindHint(p, rc.rule);
    ASSERT_NE(h, nullptr) << testing::PrintToString(Rules(p));
    EXPECT_EQ(h->metric(), rc.metric);
    EXPECT_NEAR(h->value(), rc.fires, 1e-9);
    EXPECT_EQ(h->threshold(), rc.threshold);
    EXPECT_EQ(h->entry(), "k");
    EXPECT_THAT(h->message(), HasSubstr(rc.message_part));
    EXPECT_THAT(h->message(), testing::StartsWith("k: "));
  }
}

TEST(HintsTest, EveryRuleInTheTableIsCovered) {
  std::vector<std::string> covered = {"near_limit"};
  for (const RuleCase& rc : RuleCases()) covered.push_back(rc.rule);
  for (const HintRule& r : HintRules()) {
    EXPECT_THAT(covered, testing::Contains(std::string(r.id))) << r.id;
  }
}

TEST(HintsTest, NearLimitIsAPlanHint) {
  v1::ProfileReport p = CleanProfile();
  p.mutable_timing()->mutable_kernel()->set_median_us(4.5);  // 1.5x of 3 us.
  AnalyzeProfile(Gpu(), &p);
  const v1::ProfileHint* h = FindHint(p, "near_limit");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->entry(), "");
  EXPECT_EQ(h->metric(), "headroom_ratio");
  EXPECT_DOUBLE_EQ(h->value(), 1.5);
  EXPECT_EQ(h->threshold(), "<= 1.5 x the floor");
  EXPECT_THAT(h->message(), HasSubstr("stop optimizing this kernel"));

  p.mutable_timing()->mutable_kernel()->set_median_us(4.6);
  AnalyzeProfile(Gpu(), &p);
  EXPECT_EQ(FindHint(p, "near_limit"), nullptr);
}

TEST(HintsTest, GuardsKeepRulesQuiet) {
  // Low achieved occupancy is not a hint when the theoretical one is low.
  v1::ProfileReport p = CleanProfile();
  p.mutable_launches(0)->set_theoretical_occupancy_pct(40);
  p.mutable_launches(0)->mutable_counters()->set_achieved_occupancy_pct(10);
  AnalyzeProfile(Gpu(), &p);
  EXPECT_EQ(FindHint(p, "low_achieved_occupancy"), nullptr);
  // Sectors per request mean nothing without requests.
  p = CleanProfile();
  p.mutable_launches(0)->mutable_counters()->set_global_load_requests(0);
  p.mutable_launches(0)
      ->mutable_counters()
      ->set_global_load_sectors_per_request(32);
  AnalyzeProfile(Gpu(), &p);
  EXPECT_EQ(FindHint(p, "uncoalesced_loads"), nullptr);
  // Below one wave there is no tail; 2.5 waves is out of its range too.
  for (double waves : {0.5, 2.0, 3.25}) {
    p = CleanProfile();
    p.mutable_launches(0)->set_waves(waves);
    AnalyzeProfile(Gpu(), &p);
    EXPECT_EQ(FindHint(p, "tail_effect"), nullptr) << waves;
  }
}

TEST(HintsTest, SuspectFiguresFireNothing) {
  v1::ProfileReport p = CleanProfile();
  v1::CounterProfile* c = p.mutable_launches(0)->mutable_counters();
  c->set_global_load_sectors_per_request(40);
  c->add_suspect(
      "global_load_sectors_per_request 40 > 32: more sectors than a "
      "request can touch");
  c->set_dram_pct_of_peak(130);
  c->add_suspect("dram_pct_of_peak: 130% > 100%");
  AnalyzeProfile(Gpu(), &p);
  EXPECT_EQ(FindHint(p, "uncoalesced_loads"), nullptr);
  EXPECT_EQ(FindHint(p, "dram_bound"), nullptr);
  EXPECT_EQ(SuspectReason(p.launches(0), "dram_pct_of_peak"), "130% > 100%");
  EXPECT_EQ(SuspectReason(p.launches(0), "dram_pct"), std::nullopt);
  // The unsuspected store figure still fires.
  c->set_global_store_sectors_per_request(32);
  AnalyzeProfile(Gpu(), &p);
  EXPECT_NE(FindHint(p, "uncoalesced_stores"), nullptr);
}

TEST(HintsTest, MissingFiguresFireNothing) {
  // The fast preset has no occupancy or stall figures: their zeros are not
  // facts.
  v1::ProfileReport p = CleanProfile();
  p.set_preset("fast");
  v1::LaunchProfile* l = p.mutable_launches(0);
  l->mutable_counters()->set_achieved_occupancy_pct(0);
  l->mutable_counters()->set_eligible_warps_per_cycle(0);
  l->clear_top_stalls();
  for (const char* f : {"achieved_occupancy_pct", "eligible_warps_per_cycle"}) {
    v1::MissingFigure* m = p.add_missing();
    m->set_figure(f);
    m->set_reason("not in the fast preset");
  }
  AnalyzeProfile(Gpu(), &p);
  EXPECT_TRUE(p.hints().empty()) << testing::PrintToString(Rules(p));
  EXPECT_EQ(CounterFigure(p, *l, "achieved_occupancy_pct"), std::nullopt);
  EXPECT_EQ(CounterFigure(p, *l, "l2_hit_rate_pct"), 80);
  EXPECT_EQ(CounterFigure(p, *l, "no_such_figure"), std::nullopt);
}

TEST(HintsTest, RawMetricsAreFigures) {
  v1::ProfileReport p = CleanProfile();
  (*p.mutable_launches(0)
        ->mutable_counters()
        ->mutable_metrics())["dram__bytes_read.sum"] = 3e6;
  EXPECT_EQ(CounterFigure(p, p.launches(0), "dram__bytes_read.sum"), 3e6);
}

TEST(HintsTest, SmallLaunchesOfAPlanGetNoHints) {
  v1::ProfileReport p = CleanProfile();
  p.mutable_launches(0)->set_share_pct(97);
  v1::LaunchProfile small = CleanLaunch("small");
  small.set_share_pct(3);
  small.mutable_counters()->set_global_load_sectors_per_request(32);
  *p.add_launches() = small;
  AnalyzeProfile(Gpu(), &p);
  EXPECT_EQ(FindHint(p, "uncoalesced_loads"), nullptr);
  p.mutable_launches(1)->set_share_pct(30);
  AnalyzeProfile(Gpu(), &p);
  const v1::ProfileHint* h = FindHint(p, "uncoalesced_loads");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->entry(), "small");
}

TEST(HintsTest, AnalysisReplacesEarlierHints) {
  v1::ProfileReport p = CleanProfile();
  p.add_hints()->set_rule("stale");
  AnalyzeProfile(Gpu(), &p);
  EXPECT_TRUE(p.hints().empty());
}

TEST(HintsTest, OccupancyLimiterNamesSharedMemory) {
  v1::LaunchProfile l = CleanLaunch();
  l.set_dynamic_smem_bytes(100000);
  EXPECT_EQ(OccupancyLimiter(Gpu(), l),
            "shared memory (100000 B per block), allowing 2 blocks/SM");
  l.set_dynamic_smem_bytes(0);
  EXPECT_EQ(OccupancyLimiter(Gpu(), l),
            "the block size (256 threads), allowing 8 blocks/SM");
  EXPECT_EQ(OccupancyLimiter(v1::GpuSpec(), l), "");
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
