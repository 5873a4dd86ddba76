// The profile part of the reports: counters per launch, kbd's analysis
// (headroom, roofline, hints) and deltas, with and without counters, in the
// job text and in the agent's text.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "agent/agent_report.h"
#include "analysis/profile_analysis.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/report_fixtures.h"
#include "report/report_text.h"

namespace kbench {
namespace {

using ::kbench::report_fixtures::Lines;
using ::kbench::report_fixtures::PassedSubmitJob;
using ::kbench::report_fixtures::Timing;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// A profile job with counters, kbd's analysis and a previous profile.
v1::Job CountedProfileJob() {
  v1::Job job = PassedSubmitJob();
  job.set_kind(v1::JOB_KIND_PROFILE);
  v1::JobResult* r = job.mutable_result();
  r->clear_timing();
  v1::GpuSpec* gpu = r->mutable_gpu();
  gpu->set_name("NVIDIA H200");
  gpu->set_sm_count(132);
  gpu->set_max_threads_per_sm(2048);
  gpu->set_measured_copy_gbps(4000);
  gpu->set_measured_fp32_tflops(60);
  gpu->set_measured_launch_us(3);
  v1::ProfileReport* p = r->mutable_profile();
  p->set_shape("orig");
  (*p->mutable_dims())["K"] = 56;
  v1::LaunchProfile* l = p->add_launches();
  l->set_entry("gather_linear");
  for (int64_t g : {264, 1, 1}) l->add_grid(g);
  for (int64_t b : {256, 1, 1}) l->add_block(b);
  l->set_registers(28);
  l->set_blocks_per_sm(2);
  l->set_theoretical_occupancy_pct(100);
  l->set_waves(1.0);
  l->mutable_time()->set_median_us(12.0);
  l->set_share_pct(100);
  v1::CounterProfile* c = l->mutable_counters();
  c->set_gpu_time_us(11.5);
  c->set_dram_read_bytes(1048576);
  c->set_dram_write_bytes(524288);
  c->set_dram_read_gbps(91.2);
  c->set_dram_write_gbps(45.6);
  c->set_dram_pct_of_peak(3.4);
  c->set_l2_hit_rate_pct(108.3);
  c->add_suspect("l2_hit_rate_pct 108.3% > 100%: counters overlapped");
  c->set_fma_pipe_pct(12);
  c->set_achieved_occupancy_pct(71.5);
  c->set_eligible_warps_per_cycle(0.6);
  c->set_active_warps_per_cycle(11.4);
  c->set_issue_slot_pct(22);
  c->set_global_load_requests(1000);
  c->set_global_load_sectors(32000);
  c->set_global_load_sectors_per_request(32);
  c->set_global_store_requests(250);
  c->set_global_store_sectors(1000);
  c->set_global_store_sectors_per_request(4);
  c->set_smem_bank_conflicts(0);
  c->set_sm_throughput_pct(20);
  c->set_memory_throughput_pct(35);
  c->set_flops(2.15e7);
  v1::StallReason* s = l->add_top_stalls();
  s->set_reason("long_scoreboard");
  s->set_share_pct(55);
  s = l->add_top_stalls();
  s->set_reason("wait");
  s->set_share_pct(12.5);
  v1::MissingFigure* m = p->add_missing();
  m->set_figure("l1_hit_rate_pct");
  m->set_reason("not in the fast preset");
  m = p->add_missing();
  m->set_figure("tensor_pipe_pct");
  m->set_reason("not in the fast preset");
  p->set_preset("fast");
  p->set_passes(3);
  p->set_counters_ms(340);
  v1::LaunchProfile* ref = p->add_reference_launches();
  ref->set_entry("sm90_xmma_gemm_f32f32");
  ref->mutable_time()->set_median_us(20);
  ref->set_share_pct(80);
  p->mutable_total()->set_median_us(12.0);
  p->mutable_total()->set_n(100);
  p->set_flops(2.15e7);
  p->set_min_bytes(1.3e6);
  *p->mutable_timing() = Timing(2.0);
  p->mutable_timing()->mutable_kernel()->set_median_us(12.0);
  AnalyzeProfile(*gpu, p);
  v1::ProfileReport previous = *p;
  previous.mutable_timing()->mutable_kernel()->set_median_us(14.0);
  previous.mutable_launches(0)->set_registers(24);
  ComputeDeltas(previous, "j-1", p);
  return job;
}

// The lines of `text` from the one starting with `first` to the one
// starting with `end` (exclusive).
std::vector<std::string> Section(const std::string& text,
                                 const std::string& first,
                                 const std::string& end) {
  std::vector<std::string> out;
  bool in = false;
  for (const std::string& line : Lines(text)) {
    if (absl::StartsWith(line, first)) in = true;
    if (in && absl::StartsWith(line, end)) break;
    if (in) out.push_back(line);
  }
  return out;
}

TEST(ReportTextTest, ProfileCountersAnalysisAndDeltas) {
  const std::string text = FormatJob(CountedProfileJob());
  EXPECT_THAT(text, HasSubstr("    counters: GPU time 11.5 us; SOL compute "
                              "20.0%, memory 35.0%\n"));
  EXPECT_THAT(text, HasSubstr("    DRAM: read 1 MiB (91.2 GB/s), write 512 "
                              "KiB (45.6 GB/s); 3.4% of peak DRAM "
                              "throughput\n"));
  // A missing figure is not a zero; a suspect one says so beside it.
  EXPECT_THAT(text, HasSubstr("    cache hit rate: L1 n/a, L2 108.3% "
                              "(suspect: 108.3% > 100%: counters "
                              "overlapped)\n"));
  EXPECT_THAT(text, HasSubstr("pipes (of peak): FMA 12.0%, tensor n/a; "
                              "issue slots 22.0% busy"));
  EXPECT_THAT(text, HasSubstr("occupancy: achieved 71.5% of 100.0% "
                              "theoretical; warps/cycle per scheduler: 0.60 "
                              "eligible, 11.40 active\n"));
  EXPECT_THAT(text, HasSubstr("global loads: 32.00 sectors/request (1000 "
                              "requests, 32000 sectors); stores: 4.00 "
                              "sectors/request (250 requests, 1000 sectors)"));
  EXPECT_THAT(text, HasSubstr("shared memory: 0 bank conflicts"));
  EXPECT_THAT(text, HasSubstr("    top stalls (of sampled warp stalls): "
                              "long_scoreboard 55.0%, wait 12.5%\n"));
  EXPECT_THAT(text, HasSubstr("  counters: preset fast, 3 passes per kernel "
                              "(cold L2 each), 340 ms collecting\n"));
  EXPECT_THAT(text, HasSubstr("  missing: l1_hit_rate_pct, tensor_pipe_pct "
                              "(not in the fast preset)\n"));
  EXPECT_THAT(text, HasSubstr("  reference kernel: sm90_xmma_gemm_f32f32: "
                              "20.0 us (80.0% of the reference)\n"));
  EXPECT_THAT(text, HasSubstr("  headroom: 12.0 us is 4.0x the 3.00 us floor "
                              "(launch latency): room to improve [floors: "
                              "memory 0.33 us, compute 0.36 us, launch 3.00 "
                              "us]\n"));
  EXPECT_THAT(text, HasSubstr("  roofline: latency-bound: SOL is 35% (< "
                              "60%)"));
  EXPECT_THAT(text, HasSubstr("  hints:\n"));
  EXPECT_THAT(text, HasSubstr("    [uncoalesced_loads] "
                              "global_load_sectors_per_request=32 > 8 "
                              "sectors/request: gather_linear: global loads "
                              "use 32 sectors per request"));
  EXPECT_THAT(text, HasSubstr("    [long_scoreboard] "
                              "stall_long_scoreboard_pct=55 > 40% of "
                              "stalls: "));
  EXPECT_THAT(text, HasSubstr("    [low_eligible_warps] "
                              "eligible_warps_per_cycle=0.6 < 1 "
                              "warps/cycle per scheduler: "));
  EXPECT_THAT(text, HasSubstr("  delta vs previous profile (job j-1):\n"));
  EXPECT_THAT(text, HasSubstr("    kernel_median_us: 14.0 us -> 12.0 us  "
                              "ok\n"));
  EXPECT_THAT(text, HasSubstr("    registers: 24 registers/thread -> 28 "
                              "registers/thread  REGRESSED\n"));
  // The suspect L2 figure is neither a hint nor a delta.
  EXPECT_THAT(text, Not(HasSubstr("l2_hit_rate_pct:")));
  const std::vector<std::string> profile = Section(text, "profile (", "gpu: ");
  ASSERT_FALSE(profile.empty());
  EXPECT_LT(profile.size(), 60u) << text;
}

TEST(ReportTextTest, ProfileWithoutCountersSaysWhy) {
  v1::Job job = CountedProfileJob();
  v1::ProfileReport* p = job.mutable_result()->mutable_profile();
  p->mutable_launches(0)->clear_counters();
  p->mutable_launches(0)->clear_top_stalls();
  p->clear_missing();
  p->set_counters_unavailable(
      "CUPTI: insufficient privileges (ERR_NVGPUCTRPERM)");
  AnalyzeProfile(job.result().gpu(), p);
  const std::string text = FormatJob(job);
  EXPECT_THAT(text, HasSubstr("  counters: unavailable: CUPTI: insufficient "
                              "privileges (ERR_NVGPUCTRPERM)"));
  EXPECT_THAT(text, Not(HasSubstr("GPU time")));
  EXPECT_THAT(text, Not(HasSubstr("roofline:")));
  EXPECT_THAT(text, HasSubstr("headroom: "));
}

TEST(ReportTextTest, AgentTextCarriesTheProfileAnalysis) {
  const std::string text = AgentJobText(CountedProfileJob());
  EXPECT_THAT(text, HasSubstr("  counters: GPU time 11.5 us"));
  EXPECT_THAT(text, HasSubstr("(suspect: 108.3% > 100%"));
  EXPECT_THAT(text, HasSubstr("\nheadroom: 12.0 us is 4.0x the 3.00 us "
                              "floor"));
  EXPECT_THAT(text, HasSubstr("\nroofline: latency-bound"));
  EXPECT_THAT(text, HasSubstr("\nhints:\n  [uncoalesced_loads] "));
  EXPECT_THAT(text, HasSubstr("\ndelta vs previous profile (job j-1):\n"));
  EXPECT_THAT(text, HasSubstr("  registers: 24 registers/thread -> 28 "
                              "registers/thread  REGRESSED\n"));
}

TEST(ReportTextTest, AProfileOfOneRankSaysWhoseCountersTheyAre) {
  v1::Job job = CountedProfileJob();
  const std::string one_gpu = FormatJob(job) + AgentJobText(job);
  EXPECT_THAT(one_gpu, Not(HasSubstr("ranks:")));
  v1::ProfileReport* p = job.mutable_result()->mutable_profile();
  p->set_rank(0);
  p->set_world_size(2);
  const std::string expected =
      "ranks: the launches and counters are rank 0's of 2, its kernels run "
      "alone with every rank's inputs in place; the throughput is of its "
      "share (1/2) of the work; the timing is every rank's\n";
  const std::string text = FormatJob(job);
  EXPECT_THAT(text, HasSubstr("):\n  " + expected + "  launch 1: "));
  EXPECT_THAT(AgentJobText(job), HasSubstr("\n" + expected + "launch "));
}

TEST(ReportTextTest, EachRanksOwnSpanIsShownForAProblemThatSpansGpus) {
  v1::Job job = PassedSubmitJob();
  v1::TimingReport* t = job.mutable_result()->mutable_timing();
  EXPECT_EQ(FormatRankTimes(*t), "");
  EXPECT_THAT(FormatJob(job), Not(HasSubstr("each rank")));
  for (int r = 0; r < 2; ++r) {
    v1::RankTiming* mine = t->add_ranks();
    mine->set_rank(r);
    mine->mutable_kernel()->set_median_us(9 + r);
    mine->mutable_kernel()->set_n(40);
    mine->mutable_reference()->set_median_us(30);
    mine->mutable_reference()->set_n(40);
    mine->mutable_kernel_gpu()->set_median_us(7.1 + r);
    mine->mutable_kernel_gpu()->set_n(40);
    mine->mutable_reference_gpu()->set_median_us(28.5);
    mine->mutable_reference_gpu()->set_n(40);
  }
  const std::string gpu =
      "each rank's own span (GPU time), kernel / reference: rank 0: 7.10 us "
      "/ 28.5 us; rank 1: 8.10 us / 28.5 us";
  EXPECT_EQ(FormatRankTimes(*t), gpu);
  EXPECT_THAT(FormatJob(job), HasSubstr("\n  " + gpu + "\n  launches: "));
  EXPECT_THAT(AgentJobText(job), HasSubstr("\n" + gpu + "\nlaunches: "));
  // Without GPU times on every rank, the events.
  t->mutable_ranks(1)->clear_kernel_gpu();
  EXPECT_EQ(FormatRankTimes(*t),
            "each rank's own span (events), kernel / reference: rank 0: 9.00 "
            "us / 30.0 us; rank 1: 10.0 us / 30.0 us");
}

}  // namespace
}  // namespace kbench
