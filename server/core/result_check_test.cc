// Tests of CheckWorkerResult (server/core/result_check.h): honest results (as
// runner/ and testing/fake_runner_main.cc make them) pass; results a rogue or
// broken worker could send are refused with a message that says what is
// wrong: verdicts that contradict their own checks, missing shapes, times
// below the physical floor or not finite, a speedup that does not follow
// from the times, another GPU or source, reports the kind never makes,
// oversized fields, and hidden cases named in the message.
#include "server/core/result_check.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/digest.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/result_check_fixtures.h"

namespace kbench {
namespace {

using ::kbench::result_check_fixtures::Gpu;
using ::kbench::result_check_fixtures::Honest;
using ::kbench::result_check_fixtures::Job;
using ::kbench::result_check_fixtures::Stats;

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ResultCheckTest, HonestResultsPass) {
  for (v1::JobKind kind : {v1::JOB_KIND_CORRECTNESS, v1::JOB_KIND_SUBMIT,
                           v1::JOB_KIND_PROFILE, v1::JOB_KIND_SANITIZE}) {
    const v1::RunnerJob job = Job(kind);
    EXPECT_TRUE(CheckWorkerResult(job, Gpu(), Honest(job)).ok())
        << v1::JobKind_Name(kind) << ": "
        << CheckWorkerResult(job, Gpu(), Honest(job));
  }
}

TEST(ResultCheckTest, HonestFailuresPass) {
  const v1::RunnerJob job = Job(v1::JOB_KIND_CORRECTNESS);
  // A wrong kernel: one trial failed, with NaN outputs (infinite errors).
  v1::JobResult failed = Honest(job);
  failed.set_verdict(v1::VERDICT_FAILED);
  v1::TrialResult* t = failed.mutable_correctness()->mutable_trials(1);
  t->set_passed(false);
  t->set_nan_count(3);
  t->set_mismatches(3);
  t->set_max_abs_error(INFINITY);
  failed.mutable_correctness()->set_passed(false);
  failed.mutable_correctness()->set_trials_passed(3);
  EXPECT_TRUE(CheckWorkerResult(job, Gpu(), failed).ok())
      << CheckWorkerResult(job, Gpu(), failed);
  // A crash mid-check: the counts were never tallied.
  v1::JobResult crashed;
  crashed.set_verdict(v1::VERDICT_CRASHED);
  *crashed.mutable_gpu() = Gpu();
  crashed.mutable_correctness()->add_trials()->set_shape_set("default");
  crashed.mutable_correctness()->mutable_trials(0)->set_shape("a");
  crashed.set_message("CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_TRUE(CheckWorkerResult(job, Gpu(), crashed).ok())
      << CheckWorkerResult(job, Gpu(), crashed);
  // A timeout from the worker's watchdog, with an error-free report.
  v1::JobResult timed_out;
  timed_out.set_verdict(v1::VERDICT_TIMED_OUT);
  *timed_out.mutable_gpu() = Gpu();
  EXPECT_TRUE(CheckWorkerResult(job, Gpu(), timed_out).ok());
}

struct Forgery {
  const char* what;
  v1::JobKind kind;
  std::function<void(v1::JobResult*)> edit;
  const char* says;  // A part of the message.
};

TEST(ResultCheckTest, ForgedOrBrokenResultsAreRefused) {
  const std::vector<Forgery> forgeries = {
      {"passed with a failed trial", v1::JOB_KIND_CORRECTNESS,
       [](v1::JobResult* r) {
         r->mutable_correctness()->mutable_trials(2)->set_passed(false);
       },
       "trials failed"},
      {"passed although correctness failed", v1::JOB_KIND_CORRECTNESS,
       [](v1::JobResult* r) { r->mutable_correctness()->set_passed(false); },
       "correctness.passed is false"},
      {"passed trial with mismatches", v1::JOB_KIND_CORRECTNESS,
       [](v1::JobResult* r) {
         r->mutable_correctness()->mutable_trials(0)->set_mismatches(5);
       },
       "trial 1 (default/a) is marked passed with 5 mismatches"},
      {"passed with an error", v1::JOB_KIND_SUBMIT,
       [](v1::JobResult* r) { r->mutable_error()->set_code(13); },
       "PASSED with an error"},
      {"passed with no trials", v1::JOB_KIND_CORRECTNESS,
       [](v1::JobResult* r) {
         r->mutable_correctness()->clear_trials();
         r->mutable_correctness()->set_trials_run(0);
         r->mutable_correctness()->set_trials_passed(0);
       },
       "no trials"},
      {"a shape left out", v1::JOB_KIND_CORRECTNESS,
       [](v1::JobResult* r) {
         r->mutable_correctness()->mutable_trials()->RemoveLast();
         r->mutable_correctness()->set_trials_run(3);
         r->mutable_correctness()->set_trials_passed(3);
       },
       "only 3 of 4 shapes"},
      {"a shape made up", v1::JOB_KIND_CORRECTNESS,
       [](v1::JobResult* r) {
         r->mutable_correctness()->mutable_trials(0)->set_shape("tiny");
       },
       "shape the job does not have"},
      {"counts that disagree", v1::JOB_KIND_CORRECTNESS,
       [](v1::JobResult* r) { r->mutable_correctness()->set_trials_run(40); },
       "counts disagree"},
      {"no correctness report", v1::JOB_KIND_CORRECTNESS,
       [](v1::JobResult* r) { r->clear_correctness(); },
       "without a correctness report"},
      {"speedup 1000", v1::JOB_KIND_SUBMIT,
       [](v1::JobResult* r) { r->mutable_timing()->set_speedup(1000); },
       "speedup 1000 does not match"},
      {"speedup off by 2%", v1::JOB_KIND_SUBMIT,
       [](v1::JobResult* r) { r->mutable_timing()->set_speedup(2.04); },
       "does not match"},
      {"speedup on GPU time that its GPU times do not give",
       v1::JOB_KIND_SUBMIT,
       [](v1::JobResult* r) {
         v1::TimingReport* t = r->mutable_timing();
         *t->mutable_kernel_gpu() = Stats(8);
         *t->mutable_reference_gpu() = Stats(8);
         t->set_speedup_basis(v1::TIMING_BASIS_GPU_TIME);  // 2.0 claimed.
       },
       "(GPU time)"},
      {"speedup on GPU time without GPU times", v1::JOB_KIND_SUBMIT,
       [](v1::JobResult* r) {
         r->mutable_timing()->set_speedup_basis(v1::TIMING_BASIS_GPU_TIME);
       },
       "does not match"},
      {"speedup on the graph basis", v1::JOB_KIND_SUBMIT,
       [](v1::JobResult* r) {
         r->mutable_timing()->set_speedup_basis(v1::TIMING_BASIS_GRAPH);
       },
       "is not events or GPU time"},
      {"NaN graph time", v1::JOB_KIND_SUBMIT,
       [](v1::JobResult* r) {
         *r->mutable_timing()->mutable_kernel_graph() = Stats(5);
         r->mutable_timing()->mutable_kernel_graph()->set_mean_us(std::nan(""));
       },
       "timing.kernel_graph"},
      {"negative per-basis speedup", v1::JOB_KIND_SUBMIT,
       [](v1::JobResult* r) { r->mutable_timing()->set_speedup_graph(-3); },
       "speedup_graph"},
      {"kernel faster than any launch", v1::JOB_KIND_SUBMIT,
       [](v1::JobResult* r) {
         *r->mutable_timing()->mutable_kernel() = Stats(0.02);
         r->mutable_timing()->set_speedup(1000);
       },
       "below 0.5 us"},
      {"reference below the floor", v1::JOB_KIND_SUBMIT,
       [](v1::JobResult* r) {
         *r->mutable_timing()->mutable_reference() = Stats(0.1);
         r->mutable_timing()->set_speedup(0.01);
       },
       "timing.reference median"},
      {"NaN time", v1::JOB_KIND_SUBMIT,
       [](v1::JobResult* r) {
         r->mutable_timing()->mutable_kernel()->set_mean_us(std::nan(""));
       },
       "timing.kernel.mean_us"},
      {"infinite speedup", v1::JOB_KIND_SUBMIT,
       [](v1::JobResult* r) { r->mutable_timing()->set_speedup(INFINITY); },
       "speedup"},
      {"negative time", v1::JOB_KIND_SUBMIT,
       [](v1::JobResult* r) {
         r->mutable_timing()->mutable_kernel()->set_min_us(-1);
       },
       "timing.kernel.min_us"},
      {"median above max", v1::JOB_KIND_SUBMIT,
       [](v1::JobResult* r) {
         r->mutable_timing()->mutable_kernel()->set_max_us(5);
       },
       "not ordered"},
      {"no samples", v1::JOB_KIND_SUBMIT,
       [](v1::JobResult* r) {
         r->mutable_timing()->mutable_kernel()->set_n(0);
       },
       "no samples"},
      {"no timing on a passed submit", v1::JOB_KIND_SUBMIT,
       [](v1::JobResult* r) { r->clear_timing(); },
       "without the timing report"},
      {"timing of another shape", v1::JOB_KIND_SUBMIT,
       [](v1::JobResult* r) { r->mutable_timing()->set_shape("b"); },
       "not of the shape the job timed"},
      {"profile's own timing forged", v1::JOB_KIND_PROFILE,
       [](v1::JobResult* r) {
         r->mutable_profile()->mutable_timing()->set_speedup(50);
       },
       "profile.timing.speedup"},
      {"timing on a correctness job", v1::JOB_KIND_CORRECTNESS,
       [](v1::JobResult* r) { r->mutable_timing()->set_speedup(1000); },
       "timing report"},
      {"profile of a rank a one-GPU job has not", v1::JOB_KIND_PROFILE,
       [](v1::JobResult* r) {
         r->mutable_profile()->set_rank(1);
         r->mutable_profile()->set_world_size(2);
       },
       "profile.rank 1 of world_size 2 is not a rank of the job"},
      {"profile of a negative rank", v1::JOB_KIND_PROFILE,
       [](v1::JobResult* r) { r->mutable_profile()->set_rank(-1); },
       "profile.rank -1"},
      {"profile on a submit", v1::JOB_KIND_SUBMIT,
       [](v1::JobResult* r) { r->mutable_profile()->set_preset("full"); },
       "not a profile job"},
      {"made-up GPU", v1::JOB_KIND_SUBMIT,
       [](v1::JobResult* r) { r->mutable_gpu()->set_name("NVIDIA B300"); },
       "names GPU 'NVIDIA B300'"},
      {"another GPU's uuid", v1::JOB_KIND_SUBMIT,
       [](v1::JobResult* r) { r->mutable_gpu()->set_uuid("GPU-ffff"); },
       "uuid GPU-ffff"},
      {"no GPU", v1::JOB_KIND_CORRECTNESS,
       [](v1::JobResult* r) { r->clear_gpu(); }, "names GPU ''"},
      {"manifest of another GPU", v1::JOB_KIND_CORRECTNESS,
       [](v1::JobResult* r) {
         r->mutable_manifest()->set_gpu_name("NVIDIA B300");
       },
       "manifest names another GPU"},
      {"result of another source", v1::JOB_KIND_CORRECTNESS,
       [](v1::JobResult* r) {
         r->mutable_manifest()->set_source_digest(Sha256Hex("other"));
       },
       "another source"},
      {"unknown verdict", v1::JOB_KIND_CORRECTNESS,
       [](v1::JobResult* r) { r->set_verdict(v1::VERDICT_UNSPECIFIED); },
       "verdict"},
      {"verdict out of range", v1::JOB_KIND_CORRECTNESS,
       [](v1::JobResult* r) { r->set_verdict(static_cast<v1::Verdict>(99)); },
       "verdict (99)"},
      {"huge log", v1::JOB_KIND_CORRECTNESS,
       [](v1::JobResult* r) { r->set_log(std::string(1 << 20, 'x')); },
       "log is 1048576 bytes"},
      {"huge message", v1::JOB_KIND_CORRECTNESS,
       [](v1::JobResult* r) { r->set_message(std::string(100000, 'x')); },
       "message is"},
      {"too many hot lines", v1::JOB_KIND_PROFILE,
       [](v1::JobResult* r) {
         for (int i = 0; i < 10001; ++i) r->mutable_profile()->add_hot_lines();
       },
       "profile.hot_lines has 10001"},
      {"NaN runner time", v1::JOB_KIND_CORRECTNESS,
       [](v1::JobResult* r) { r->set_runner_ms(std::nan("")); }, "runner_ms"},
      {"sanitize passed with findings", v1::JOB_KIND_SANITIZE,
       [](v1::JobResult* r) { r->mutable_sanitize()->add_findings(); },
       "1 findings"},
      {"sanitize passed with a timed-out run", v1::JOB_KIND_SANITIZE,
       [](v1::JobResult* r) {
         r->mutable_sanitize()->mutable_runs(0)->set_timed_out(true);
       },
       "timed out"},
      {"sanitize passed without a report", v1::JOB_KIND_SANITIZE,
       [](v1::JobResult* r) { r->clear_sanitize(); },
       "without a sanitizer report"},
      {"sanitize passed with nothing run", v1::JOB_KIND_SANITIZE,
       [](v1::JobResult* r) { r->mutable_sanitize()->clear_runs(); },
       "no runs"},
  };
  // A tool the job asked for that did not run.
  {
    v1::RunnerJob job = Job(v1::JOB_KIND_SANITIZE);
    const v1::JobResult r = Honest(job);
    job.add_sanitize_tools("racecheck");
    const absl::Status s = CheckWorkerResult(job, Gpu(), r);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("racecheck run the job asked for"));
  }
  for (const Forgery& f : forgeries) {
    const v1::RunnerJob job = Job(f.kind);
    v1::JobResult r = Honest(job);
    f.edit(&r);
    const absl::Status s = CheckWorkerResult(job, Gpu(), r);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << f.what;
    EXPECT_THAT(s.message(), HasSubstr(f.says)) << f.what << ": " << s;
  }
}

// The expert baseline's figures: only for a problem that declares one,
// under its name, with real times and a ratio that matches them.
TEST(ResultCheckTest, ExpertFiguresAreCheckedAgainstTheProblem) {
  v1::RunnerJob job = Job(v1::JOB_KIND_SUBMIT);
  const v1::JobResult plain = Honest(job);
  job.mutable_problem()->mutable_expert()->set_name("one fused kernel");
  v1::JobResult honest = plain;
  v1::TimingReport* t = honest.mutable_timing();
  t->set_expert_name("one fused kernel");
  t->set_expert_launches(1);
  *t->mutable_expert() = Stats(8);
  t->set_speedup_vs_expert(0.8);  // Events: 8 us / 10 us.
  EXPECT_TRUE(CheckWorkerResult(job, Gpu(), honest).ok())
      << CheckWorkerResult(job, Gpu(), honest);
  EXPECT_TRUE(CheckWorkerResult(job, Gpu(), plain).ok());  // Not timed.

  const std::vector<
      std::pair<std::function<void(v1::TimingReport*)>, std::string>>
      forgeries = {
          {[](v1::TimingReport* t) { t->set_speedup_vs_expert(5); },
           "speedup_vs_expert 5 does not match its own times"},
          {[](v1::TimingReport* t) { t->set_expert_name("cuBLAS"); },
           "expert_name is not the name"},
          {[](v1::TimingReport* t) {
             t->mutable_expert()->set_median_us(std::nan(""));
           },
           "timing.expert.median_us is nan"},
          {[](v1::TimingReport* t) {
             *t->mutable_expert() = Stats(0.1);
             t->set_speedup_vs_expert(0.01);
           },
           "timing.expert median 0.1 us is below"},
          {[](v1::TimingReport* t) { t->set_expert_launches(-1); },
           "expert_launches is -1"},
      };
  for (const auto& [edit, says] : forgeries) {
    v1::JobResult r = honest;
    edit(r.mutable_timing());
    const absl::Status s = CheckWorkerResult(job, Gpu(), r);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << says;
    EXPECT_THAT(s.message(), HasSubstr(says)) << s;
  }
  // Expert figures for a problem that declares no expert baseline.
  const v1::RunnerJob no_expert = Job(v1::JOB_KIND_SUBMIT);
  const absl::Status s = CheckWorkerResult(no_expert, Gpu(), honest);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("declares no expert baseline"));
}

TEST(ResultCheckTest, MessagesNeverNameAHiddenCase) {
  const v1::RunnerJob job = Job(v1::JOB_KIND_SUBMIT);
  v1::JobResult r = Honest(job);
  // The last trial is the hidden one.
  const int last = r.correctness().trials_size() - 1;
  ASSERT_EQ(r.correctness().trials(last).shape(), "secret_shape");
  r.mutable_correctness()->mutable_trials(last)->set_nan_count(1);
  const absl::Status s = CheckWorkerResult(job, Gpu(), r);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("a hidden case"));
  EXPECT_THAT(s.message(), Not(HasSubstr("secret_shape")));
  EXPECT_THAT(s.message(), Not(HasSubstr("holdout")));
}

TEST(ResultCheckTest, LimitsAreOptions) {
  const v1::RunnerJob job = Job(v1::JOB_KIND_SUBMIT);
  v1::JobResult r = Honest(job);
  ResultLimits strict;
  strict.min_time_us = 15;  // Above the kernel's 10 us.
  EXPECT_THAT(CheckWorkerResult(job, Gpu(), r, strict).message(),
              HasSubstr("timing.kernel median 10 us is below 15 us"));
  ResultLimits loose;
  loose.speedup_tolerance = 0.05;
  r.mutable_timing()->set_speedup(2.04);
  EXPECT_TRUE(CheckWorkerResult(job, Gpu(), r, loose).ok());
}

}  // namespace
}  // namespace kbench
