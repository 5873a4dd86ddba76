// Shared fixtures of the profile analysis tests: an H200-like GPU and a
// profile whose figures fire no hint.
#ifndef KBENCH_ANALYSIS_PROFILE_FIXTURES_H_
#define KBENCH_ANALYSIS_PROFILE_FIXTURES_H_

#include <string>
#include <vector>

#include "analysis/profile_analysis.h"
#include "kbench/v1/report.pb.h"

namespace kbench {
namespace profile_fixtures {

// An H200-like GPU: 4000 GB/s, 60 TFLOP/s (ridge 15 FLOP/B), 3 us launch.
inline v1::GpuSpec Gpu() {
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
inline v1::LaunchProfile CleanLaunch(const std::string& entry = "k") {
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
inline v1::ProfileReport CleanProfile() {
  v1::ProfileReport p;
  *p.add_launches() = CleanLaunch();
  p.set_min_bytes(4e6);  // 1 us at 4000 GB/s.
  p.set_flops(6e6);      // 0.1 us at 60 TFLOP/s.
  p.mutable_timing()->mutable_kernel()->set_median_us(20);
  p.mutable_timing()->set_speedup(2.0);
  p.set_preset("full");
  return p;
}

inline std::vector<std::string> Rules(const v1::ProfileReport& p) {
  std::vector<std::string> ids;
  for (const v1::ProfileHint& h : p.hints()) ids.push_back(h.rule());
  return ids;
}

inline const v1::ProfileHint* FindHint(const v1::ProfileReport& p,
                                       const std::string& rule) {
  for (const v1::ProfileHint& h : p.hints()) {
    if (h.rule() == rule) return &h;
  }
  return nullptr;
}

}  // namespace profile_fixtures
}  // namespace kbench

#endif  // KBENCH_ANALYSIS_PROFILE_FIXTURES_H_
