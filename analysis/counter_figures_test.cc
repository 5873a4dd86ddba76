#include "analysis/counter_figures.h"

#include <algorithm>
#include <map>
#include <string>

#include "gtest/gtest.h"

namespace kbench {
namespace {

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// The naive kernel's counters as ncu reports them at the default shape
// (6,168 load requests, 89,172 sectors), plus made-up rest.
std::map<std::string, double> NaiveValues() {
  return {
      {"gpu__time_duration.sum", 10480},  // ns
      {"dram__bytes_read.sum", 41984},
      {"dram__bytes_write.sum", 2688},
      {"lts__t_sector_hit_rate.pct", 108.3},
      {"l1tex__t_sector_hit_rate.pct", 71.5},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 89172},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 6168},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 84},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", 24},
      {"sm__warps_active.avg.pct_of_peak_sustained_active", 12.4},
      {"smsp__warps_eligible.avg.per_cycle_active", 0.21},
      {"smsp__warps_active.avg.per_cycle_active", 1.98},
      {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", 30},
      {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", 10},
      {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 300},
      {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", 100},
      {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 86016},
      {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 672},
      {"smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct", 60},
      {"smsp__warp_issue_stalled_wait_per_warp_active.pct", 10},
      {"smsp__warp_issue_stalled_selected_per_warp_active.pct", 15},
      {"smsp__warp_issue_stalled_not_selected_per_warp_active.pct", 5},
      {"smsp__warp_issue_stalled_barrier_per_warp_active.pct", 0},
      {"smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct", 20},
      {"smsp__warp_issue_stalled_branch_resolving_per_warp_active.pct", 3},
      {"smsp__warp_issue_stalled_dispatch_stall_per_warp_active.pct", 2},
  };
}

TEST(CounterFiguresTest, PresetsParseAndNameTheirMetrics) {
  EXPECT_EQ(*ParseProfilePreset(""), ProfilePreset::kFull);
  EXPECT_EQ(*ParseProfilePreset("full"), ProfilePreset::kFull);
  EXPECT_EQ(*ParseProfilePreset("fast"), ProfilePreset::kFast);
  absl::StatusOr<ProfilePreset> bad = ParseProfilePreset("everything");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("\"fast\""), std::string::npos);
  EXPECT_NE(bad.status().message().find("\"everything\""), std::string::npos);

  const auto& fast = PresetMetrics(ProfilePreset::kFast);
  const auto& full = PresetMetrics(ProfilePreset::kFull);
  EXPECT_TRUE(Has(fast, "gpu__time_duration.sum"));
  EXPECT_TRUE(Has(fast, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"));
  EXPECT_FALSE(Has(fast, "smsp__warps_eligible.avg.per_cycle_active"));
  EXPECT_LT(fast.size(), full.size());
  for (const std::string& m : fast) EXPECT_TRUE(Has(full, m)) << m;
  EXPECT_TRUE(Has(full, "sm__throughput.avg.pct_of_peak_sustained_elapsed"));
  EXPECT_TRUE(Has(
      full, "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct"));
  // No duplicates: CUPTI would count them twice in the config.
  std::vector<std::string> sorted = full;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
}

TEST(CounterFiguresTest, DerivesNcuFormulas) {
  v1::GpuSpec spec;
  spec.set_theoretical_memory_gbps(4800);
  v1::LaunchProfile l;
  DeriveCounterFigures(NaiveValues(), spec, &l);
  const v1::CounterProfile& c = l.counters();
  EXPECT_DOUBLE_EQ(c.gpu_time_us(), 10.48);
  EXPECT_DOUBLE_EQ(c.global_load_requests(), 6168);
  EXPECT_DOUBLE_EQ(c.global_load_sectors(), 89172);
  EXPECT_NEAR(c.global_load_sectors_per_request(), 14.457, 0.001);
  EXPECT_DOUBLE_EQ(c.global_store_sectors_per_request(), 3.5);
  // Bytes per ns are GB/s.
  EXPECT_NEAR(c.dram_read_gbps(), 41984 / 10480.0, 1e-9);
  EXPECT_DOUBLE_EQ(c.smem_bank_conflicts(), 40);
  EXPECT_DOUBLE_EQ(c.smem_bank_conflict_pct(), 10);
  EXPECT_DOUBLE_EQ(c.flops(), 2 * 86016 + 672);
  EXPECT_EQ(c.metrics().size(), NaiveValues().size());
  EXPECT_DOUBLE_EQ(c.metrics().at("lts__t_sector_hit_rate.pct"), 108.3);
}

TEST(CounterFiguresTest, LabelsValuesOutsideTheirPhysicalRange) {
  v1::GpuSpec spec;
  v1::LaunchProfile l;
  DeriveCounterFigures(NaiveValues(), spec, &l);
  // The naive kernel makes ~25,000 L2 lookups: too few for a stable rate.
  ASSERT_EQ(l.counters().suspect_size(), 1) << l.DebugString();
  EXPECT_NE(l.counters().suspect(0).find("l2_hit_rate_pct 108.3%: only about "
                                         "25498 L2 sector lookups"),
            std::string::npos)
      << l.counters().suspect(0);

  std::map<std::string, double> v = NaiveValues();
  v["lts__t_sector_hit_rate.pct"] = 99;
  // Enough L2 traffic for a stable hit rate (the medium shape's).
  v["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] = 2.77e8;
  v["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] = 1.68e7;
  v["smsp__warps_eligible.avg.per_cycle_active"] = 3;  // > active (1.98)
  v["gpu__time_duration.sum"] = 1;  // 44 KB in 1 ns: far past the GPU's peak
  spec.set_theoretical_memory_gbps(4800);
  v1::LaunchProfile m;
  DeriveCounterFigures(v, spec, &m);
  ASSERT_EQ(m.counters().suspect_size(), 2) << m.DebugString();
  EXPECT_NE(m.counters().suspect(0).find("eligible_warps_per_cycle"),
            std::string::npos);
  EXPECT_NE(m.counters().suspect(1).find("dram_read_gbps"), std::string::npos);

  v1::LaunchProfile fine, over;
  v = NaiveValues();
  v["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] = 2.77e8;
  v["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] = 1.68e7;
  v["lts__t_sector_hit_rate.pct"] = 100;
  DeriveCounterFigures(v, spec, &fine);
  EXPECT_EQ(fine.counters().suspect_size(), 0) << fine.DebugString();
  v["lts__t_sector_hit_rate.pct"] = 100.4;  // Above 100 at any size.
  DeriveCounterFigures(v, spec, &over);
  ASSERT_EQ(over.counters().suspect_size(), 1) << over.DebugString();
  EXPECT_NE(over.counters().suspect(0).find("outside [0, 100]%"),
            std::string::npos);
}

TEST(CounterFiguresTest, TopStallsAreSharesWithoutSelected) {
  v1::GpuSpec spec;
  v1::LaunchProfile l;
  DeriveCounterFigures(NaiveValues(), spec, &l);
  // 60 + 10 + 5 + 20 + 3 + 2 = 100 without "selected" (15) and zeros.
  ASSERT_EQ(l.top_stalls_size(), 5);
  EXPECT_EQ(l.top_stalls(0).reason(), "long_scoreboard");
  EXPECT_DOUBLE_EQ(l.top_stalls(0).share_pct(), 60);
  EXPECT_EQ(l.top_stalls(1).reason(), "lg_throttle");
  EXPECT_EQ(l.top_stalls(2).reason(), "wait");
  EXPECT_EQ(l.top_stalls(3).reason(), "not_selected");
  EXPECT_EQ(l.top_stalls(4).reason(), "branch_resolving");
  for (const v1::StallReason& s : l.top_stalls()) {
    EXPECT_NE(s.reason(), "selected");
  }
}

TEST(CounterFiguresTest, NamesMissingFiguresAndWhy) {
  std::vector<v1::MissingFigure> fast =
      MissingFigures(ProfilePreset::kFast, {}, "");
  std::map<std::string, std::string> by_figure;
  for (const v1::MissingFigure& m : fast) by_figure[m.figure()] = m.reason();
  EXPECT_TRUE(by_figure.count("eligible_warps_per_cycle"));
  EXPECT_TRUE(by_figure.count("top_stalls"));
  EXPECT_FALSE(by_figure.count("gpu_time_us"));
  EXPECT_FALSE(by_figure.count("global_load_sectors_per_request"));
  EXPECT_NE(by_figure["l1_hit_rate_pct"].find("fast preset"),
            std::string::npos);

  EXPECT_TRUE(MissingFigures(ProfilePreset::kFull, {}, "").empty());
  std::vector<v1::MissingFigure> refused = MissingFigures(
      ProfilePreset::kFull, {"lts__t_sector_hit_rate.pct"}, "refused");
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].figure(), "l2_hit_rate_pct");
  EXPECT_EQ(refused[0].reason(), "lts__t_sector_hit_rate.pct: refused");
}

}  // namespace
}  // namespace kbench
