#include "report/report_text.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "analysis/profile_analysis.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/report_fixtures.h"

namespace kbench {
namespace {

using ::kbench::report_fixtures::FailedCompile;
using ::kbench::report_fixtures::kCreatedMs;
using ::kbench::report_fixtures::Lines;
using ::kbench::report_fixtures::OkCompile;
using ::kbench::report_fixtures::PassedSubmitJob;
using ::kbench::report_fixtures::Timing;
using ::kbench::report_fixtures::Trial;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

TEST(ReportTextTest, NamesOfVerdictsStagesAndCodes) {
  EXPECT_EQ(VerdictName(v1::VERDICT_PASSED), "passed");
  EXPECT_EQ(VerdictName(v1::VERDICT_FAILED), "failed");
  EXPECT_EQ(VerdictName(v1::VERDICT_CRASHED), "crashed");
  EXPECT_EQ(VerdictName(v1::VERDICT_TIMED_OUT), "timed_out");
  EXPECT_EQ(VerdictName(v1::VERDICT_REJECTED), "rejected");
  EXPECT_EQ(VerdictName(v1::VERDICT_COMPILE_ERROR), "compile_error");
  EXPECT_EQ(VerdictName(v1::VERDICT_CANCELLED), "cancelled");
  EXPECT_EQ(VerdictName(v1::VERDICT_ERROR), "error");
  EXPECT_EQ(StageName(v1::STAGE_QUEUED), "queued");
  EXPECT_EQ(StageName(v1::STAGE_COMPILING), "compiling");
  EXPECT_EQ(StageName(v1::STAGE_WAITING_GPU), "waiting_gpu");
  EXPECT_EQ(StageName(v1::STAGE_RUNNING), "running");
  EXPECT_EQ(StageName(v1::STAGE_DONE), "done");
  EXPECT_EQ(StatusCodeName(0), "OK");
  EXPECT_EQ(StatusCodeName(3), "INVALID_ARGUMENT");
  EXPECT_EQ(StatusCodeName(4), "DEADLINE_EXCEEDED");
  EXPECT_EQ(StatusCodeName(9), "FAILED_PRECONDITION");
  EXPECT_EQ(StatusCodeName(14), "UNAVAILABLE");
  EXPECT_EQ(StatusCodeName(16), "UNAUTHENTICATED");
  EXPECT_EQ(StatusCodeName(17), "CODE_17");
  EXPECT_EQ(StatusCodeName(-1), "CODE_-1");
}

TEST(ReportTextTest, FormatDurationPicksTheUnitAtBoundaries) {
  EXPECT_EQ(FormatDuration(0), "0.00 us");
  EXPECT_EQ(FormatDuration(0.0077), "7.70 ns");  // A tiny physical floor.
  EXPECT_EQ(FormatDuration(0.05), "50.0 ns");
  EXPECT_EQ(FormatDuration(0.5), "0.50 us");
  EXPECT_EQ(FormatDuration(0.85), "0.85 us");
  EXPECT_EQ(FormatDuration(12.34), "12.3 us");
  EXPECT_EQ(FormatDuration(999), "999 us");
  EXPECT_EQ(FormatDuration(999.7), "1.000 ms");  // Never "1000 us".
  EXPECT_EQ(FormatDuration(1000), "1.000 ms");
  EXPECT_EQ(FormatDuration(1234), "1.234 ms");
  EXPECT_EQ(FormatDuration(52000), "52.00 ms");
  EXPECT_EQ(FormatDuration(999949), "999.9 ms");
  EXPECT_EQ(FormatDuration(999990), "1.00 s");  // Never "1000.0 ms".
  EXPECT_EQ(FormatDuration(1.5e6), "1.50 s");
  EXPECT_EQ(FormatDuration(2.5e6), "2.50 s");
  EXPECT_EQ(FormatDuration(600e6), "600 s");
  EXPECT_EQ(FormatDuration(-5), "-5.00 us");
  EXPECT_EQ(FormatDuration(std::nan("")), "n/a");
  EXPECT_EQ(FormatDuration(std::numeric_limits<double>::infinity()), "n/a");
}

TEST(ReportTextTest, FormatBytes) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(48 * 1024), "48 KiB");
  EXPECT_EQ(FormatBytes(50LL << 20), "50 MiB");
  EXPECT_EQ(FormatBytes(1024 * 1024 - 1), "1 MiB");
}

TEST(ReportTextTest, CompileReportSuccess) {
  const std::string text = FormatCompileReport(OkCompile());
  const std::vector<std::string> lines = Lines(text);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], "compile: ok (sm_90, 52 ms, cached)");
  EXPECT_EQ(lines[1],
            "  gather_linear: 28 registers/thread, 0 B static smem, 0 B "
            "stack, 0 B spills");
  EXPECT_EQ(lines[2],
            "  launch gather_linear grid(B, cdiv(K, 256)) "
            "block(256) smem(0)");
}

TEST(ReportTextTest, CompileReportSpillsAreShown) {
  v1::CompileReport c = OkCompile();
  c.mutable_kernels(0)->set_spill_store_bytes(64);
  c.mutable_kernels(0)->set_spill_load_bytes(32);
  EXPECT_THAT(FormatCompileReport(c),
              HasSubstr("64 B spill stores, 32 B spill loads"));
}

TEST(ReportTextTest, CompileReportFailureListsDiagnosticsNotLog) {
  const std::string text = FormatCompileReport(FailedCompile());
  EXPECT_THAT(text, StartsWith("compile: FAILED (3 errors)\n"));
  EXPECT_THAT(
      text, HasSubstr("kernel.cu:12: error: identifier \"acc\" is undefined"));
  EXPECT_THAT(text, HasSubstr("kernel.cu:20: error: expected a \";\""));
  EXPECT_THAT(text, Not(HasSubstr("kernel.cu(12)")));  // The raw log.
  EXPECT_THAT(FormatCompileReport(FailedCompile(), "mine.cu"),
              HasSubstr("mine.cu:14: error:"));
}

TEST(ReportTextTest, CompileReportFailureWithoutDiagnosticsShowsLog) {
  v1::CompileReport c = FailedCompile();
  c.clear_diagnostics();
  const std::string text = FormatCompileReport(c);
  EXPECT_THAT(text, StartsWith("compile: FAILED (sm_90; see the log)\n"));
  EXPECT_THAT(text, HasSubstr("  log:\n  kernel.cu(12): error: identifier"));
}

TEST(ReportTextTest, PassedSubmitJob) {
  const std::string text = FormatJob(PassedSubmitJob());
  const std::vector<std::string> lines = Lines(text);
  EXPECT_EQ(lines[0],
            "VERDICT: passed (job j-0001, submit, problem gather_linear_fp32, "
            "shape set default)");
  EXPECT_EQ(lines[1],
            "compile: ok (sm_90, 52 ms, cached); gather_linear 28 "
            "registers/thread");
  EXPECT_THAT(text, HasSubstr("correctness:\n  trial "));
  EXPECT_THAT(text, HasSubstr("max abs err"));
  EXPECT_THAT(text, HasSubstr("rel-norm err"));
  // One row per trial: shape, dims in name order, seed, errors, result.
  EXPECT_THAT(text, HasSubstr("default/orig  B=12 H=32 K=56 R=4  1234567  "
                              "1.19e-07     3.40e-06     2.10e-08      0"));
  EXPECT_THAT(text, HasSubstr("  2/2 trials passed\n"));
  EXPECT_THAT(text, HasSubstr("  tolerance: |out - ref| <= 0.001 + 0.001 * "
                              "|ref| per element, rel-norm <= 1e-05\n"));
  EXPECT_THAT(text, HasSubstr("  kernel: median 12.3 us, mean 12.5 us, std "
                              "0.20 us, min 12.1 us, n=200\n"));
  EXPECT_THAT(text, HasSubstr("  reference (concat + cuBLASLt GEMM with "
                              "bias, 2 launches): median 41.9 us"));
  EXPECT_THAT(text, HasSubstr("  speedup: 3.41x faster than the reference\n"));
  EXPECT_THAT(text, HasSubstr("  launches: 1 vs 2 (reference)\n"));
  EXPECT_THAT(text, HasSubstr("  L2: cold (flushed before each sample)\n"));
  EXPECT_THAT(text,
              HasSubstr("  stop reason: relative standard error below 1%\n"));
  EXPECT_THAT(text, HasSubstr("gpu: NVIDIA H200 (sm_90) on worker w-1\n"));
  EXPECT_THAT(text, HasSubstr("job time: 1.50 s from submission to result"));
  EXPECT_THAT(text, Not(HasSubstr("FAIL")));
  EXPECT_THAT(text, Not(HasSubstr("error:")));
}

TEST(ReportTextTest, SlowerThanReference) {
  v1::Job job = PassedSubmitJob();
  *job.mutable_result()->mutable_timing() = Timing(0.52);
  job.mutable_result()->mutable_timing()->set_l2_flushed(false);
  const std::string text = FormatJob(job);
  EXPECT_THAT(text, HasSubstr("  speedup: 0.52x — 1.92x slower than the "
                              "reference\n"));
  EXPECT_THAT(text, Not(HasSubstr("faster")));
  EXPECT_THAT(text, HasSubstr("  L2: hot"));
}

// A problem with an expert baseline: its time, and where the kernel stands
// against it on the speedup's basis, beside the reference.
TEST(ReportTextTest, TheExpertBaselineIsShownBesideTheReference) {
  v1::Job job = PassedSubmitJob();
  v1::TimingReport* t = job.mutable_result()->mutable_timing();
  EXPECT_THAT(FormatJob(job), Not(HasSubstr("expert")));
  t->set_expert_name("fused RMSNorm");
  t->set_expert_launches(1);
  t->mutable_expert()->set_median_us(18.4);
  t->mutable_expert()->set_n(200);
  t->set_speedup_vs_expert(1.5);
  std::string text = FormatJob(job);
  EXPECT_THAT(text, HasSubstr("  expert baseline (fused RMSNorm, 1 launch): "
                              "median 18.4 us"));
  EXPECT_THAT(text, HasSubstr("  against it: 1.50x faster\n"));
  EXPECT_THAT(text, HasSubstr("kernel / reference (its ratio) / expert "
                              "baseline:\n"));
  t->set_speedup_vs_expert(0.5);
  text = FormatJob(job);
  EXPECT_THAT(text, HasSubstr("  against it: 0.50x — 2.00x slower\n"));
}

TEST(ReportTextTest, FailedCorrectnessShowsFailingTrialAndMismatch) {
  v1::Job job = PassedSubmitJob();
  job.set_kind(v1::JOB_KIND_CORRECTNESS);
  job.set_shape_set("odd");
  v1::JobResult* r = job.mutable_result();
  r->set_verdict(v1::VERDICT_FAILED);
  r->clear_timing();
  v1::CorrectnessReport* c = r->mutable_correctness();
  c->set_passed(false);
  c->set_trials_run(3);
  c->set_trials_passed(2);
  c->set_message("odd/b7 seed 99: 12 of 672 elements outside the tolerance");
  *c->add_trials() = Trial("b7", 99, false);
  const std::string text = FormatJob(job);
  EXPECT_THAT(text, StartsWith("VERDICT: failed (job j-0001, correctness, "));
  EXPECT_THAT(text, HasSubstr("odd/b7"));
  EXPECT_THAT(text, HasSubstr("5.00e-01"));
  EXPECT_THAT(text, HasSubstr("12 of 672"));
  EXPECT_THAT(text, HasSubstr("  FAIL\n"));
  EXPECT_THAT(text,
              HasSubstr("  FAILED: 2/3 trials passed: odd/b7 seed 99: 12 of "
                        "672 elements outside the tolerance; first mismatch "
                        "at b=3 k=17 (trial odd/b7, seed 99)\n"));
  EXPECT_THAT(text, Not(HasSubstr("timing")));
}

TEST(ReportTextTest, CompileErrorJobShowsTheFullCompileReport) {
  v1::Job job = PassedSubmitJob();
  job.set_filename("broken.cu");
  v1::JobResult* r = job.mutable_result();
  r->Clear();
  r->set_verdict(v1::VERDICT_COMPILE_ERROR);
  *r->mutable_compile() = FailedCompile();
  const std::vector<std::string> lines = Lines(FormatJob(job));
  ASSERT_GE(lines.size(), 5u);
  EXPECT_THAT(lines[0], StartsWith("VERDICT: compile_error (job j-0001"));
  EXPECT_EQ(lines[1], "compile: FAILED (3 errors)");
  EXPECT_EQ(lines[2], "  broken.cu:12: error: identifier \"acc\" is undefined");
}

TEST(ReportTextTest, ErrorIsShownWithItsCodeName) {
  v1::Job job = PassedSubmitJob();
  v1::JobResult* r = job.mutable_result();
  r->Clear();
  r->set_verdict(v1::VERDICT_ERROR);
  r->mutable_error()->set_code(3);
  r->mutable_error()->set_message(
      "shape set 'huge' does not exist; available: default, odd, large");
  const std::vector<std::string> lines = Lines(FormatJob(job));
  ASSERT_GE(lines.size(), 2u);
  EXPECT_THAT(lines[0], StartsWith("VERDICT: error"));
  EXPECT_EQ(lines[1],
            "error: INVALID_ARGUMENT: shape set 'huge' does not exist; "
            "available: default, odd, large");
}

TEST(ReportTextTest, ProfileSection) {
  v1::Job job = PassedSubmitJob();
  job.set_kind(v1::JOB_KIND_PROFILE);
  v1::JobResult* r = job.mutable_result();
  r->clear_timing();
  v1::ProfileReport* p = r->mutable_profile();
  p->set_shape("orig");
  (*p->mutable_dims())["K"] = 56;
  v1::LaunchProfile* l = p->add_launches();
  l->set_entry("gather_linear");
  l->add_grid(12);
  l->add_grid(1);
  l->add_grid(1);
  l->add_block(256);
  l->add_block(1);
  l->add_block(1);
  l->set_registers(28);
  l->set_static_smem_bytes(0);
  l->set_dynamic_smem_bytes(4096);
  l->set_reserved_smem_bytes(1024);
  l->set_blocks_per_sm(8);
  l->set_theoretical_occupancy_pct(100);
  l->set_waves(0.011);
  l->mutable_time()->set_median_us(12.3);
  l->set_share_pct(100);
  p->mutable_total()->set_median_us(12.3);
  p->mutable_total()->set_n(100);
  p->set_flops(2.15e7);
  p->set_min_bytes(1.3e6);
  p->set_achieved_tflops(1.75);
  p->set_achieved_gbps(105.7);
  *p->mutable_timing() = Timing(2.0);
  const std::string text = FormatJob(job);
  EXPECT_THAT(text, HasSubstr("profile (orig, K=56):\n"));
  EXPECT_THAT(text, HasSubstr("  launch 1: gather_linear grid(12, 1, 1) "
                              "block(256, 1, 1)\n"));
  EXPECT_THAT(text, HasSubstr("28 registers/thread, 0 B local/thread; smem "
                              "0 B static + 4 KiB dynamic + 1 KiB reserved "
                              "per block"));
  EXPECT_THAT(text, HasSubstr("occupancy 100.0% theoretical (8 blocks/SM), "
                              "0.01 waves"));
  EXPECT_THAT(text, HasSubstr("time: median 12.3 us (100.0% of the plan)"));
  EXPECT_THAT(text, HasSubstr("  achieved: 1.75 TFLOP/s, 106 GB/s"));
  // The profile's own timing report is shown as the timing section.
  EXPECT_THAT(text, HasSubstr("  speedup: 2.00x faster than the reference"));
}

TEST(ReportTextTest, UnfinishedJobShowsItsStage) {
  v1::Job job;
  job.set_id("j-7");
  job.set_kind(v1::JOB_KIND_CORRECTNESS);
  job.set_stage(v1::STAGE_WAITING_GPU);
  job.set_queue_position(3);
  job.set_problem("gather_linear_fp32");
  EXPECT_EQ(Lines(FormatJob(job))[0],
            "STAGE: waiting_gpu, queue position 3 (job j-7, correctness, "
            "problem gather_linear_fp32)");
  job.set_stage(v1::STAGE_RUNNING);
  job.set_queue_position(0);
  job.set_stage_detail("trial 3/5 on odd/b7");
  EXPECT_THAT(FormatJob(job),
              StartsWith("STAGE: running: trial 3/5 on odd/b7 (job j-7"));
}

TEST(ReportTextTest, JobLineAndList) {
  const v1::Job job = PassedSubmitJob();
  const std::string line = FormatJobLine(job);
  EXPECT_THAT(line, StartsWith("j-0001 "));
  EXPECT_THAT(line, HasSubstr(" submit "));
  EXPECT_THAT(line, HasSubstr(" done "));
  EXPECT_THAT(line, HasSubstr(" passed "));
  EXPECT_THAT(line, HasSubstr(" gather_linear_fp32 "));
  EXPECT_THAT(line, HasSubstr(" 2024-05-01T12:00:00Z "));
  EXPECT_THAT(line, testing::EndsWith(" 1.50 s"));
  EXPECT_EQ(line.find('\n'), std::string::npos);

  v1::Job queued;
  queued.set_id("j-0002");
  queued.set_kind(v1::JOB_KIND_COMPILE);
  queued.set_stage(v1::STAGE_QUEUED);
  queued.set_created_unix_ms(kCreatedMs);
  const std::string queued_line = FormatJobLine(queued);
  EXPECT_THAT(queued_line, HasSubstr(" compile "));
  EXPECT_THAT(queued_line, HasSubstr(" queued "));
  EXPECT_THAT(queued_line, testing::EndsWith(" -"));

  v1::ListJobsResponse list;
  *list.add_jobs() = job;
  *list.add_jobs() = queued;
  list.set_next_page_token("tok2");
  const std::vector<std::string> lines = Lines(FormatJobList(list));
  ASSERT_EQ(lines.size(), 5u);  // Header, 2 jobs, token, "".
  EXPECT_THAT(lines[0], StartsWith("ID "));
  EXPECT_THAT(lines[0], HasSubstr("VERDICT"));
  EXPECT_EQ(lines[1], line);
  EXPECT_EQ(lines[3], "more jobs: --page-token tok2");
  EXPECT_EQ(FormatJobList(v1::ListJobsResponse()), "no jobs\n");
}

}  // namespace
}  // namespace kbench
