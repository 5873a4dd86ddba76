// kbd's hint rules (analysis/profile_hints.cc): each rule around its
// threshold, its guards, and its silence on suspect or missing figures.
#include "analysis/profile_hints.h"

#include <functional>
#include <string>
#include <vector>

#include "analysis/profile_analysis.h"
#include "analysis/profile_fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::kbench::profile_fixtures::CleanLaunch;
using ::kbench::profile_fixtures::CleanProfile;
using ::kbench::profile_fixtures::FindHint;
using ::kbench::profile_fixtures::Gpu;
using ::kbench::profile_fixtures::Rules;
using ::testing::HasSubstr;

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

}  // namespace
}  // namespace kbench
