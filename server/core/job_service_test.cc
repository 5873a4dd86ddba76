// JobService, kbd's core, in-process: a real Store in a temp directory, the
// source tree's problems, NVRTC in this process (no sandbox), the job
// table, sessions, finisher and scheduler as kbd wires them, and a worker
// played by the test through the Scheduler. Covers a compile job end to
// end, refusals recorded as turns, a GPU job leased and completed, cancel,
// and recovery after a restart.
#include "server/core/job_service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "compiler/nvrtc_compiler.h"
#include "server/core/core.h"
#include "server/core/job_service_fixtures.h"
#include "server/core/scheduler_fixtures.h"
#include "server/core/sessions.h"
#include "testing/eventually.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

using testing::Eventually;
using testing::PassedFor;
using testing::Worker;

class JobServiceTest : public testing::JobServiceFixture {};

TEST_F(JobServiceTest, ACompileJobEndsWithItsTurnWrittenBeforeItIsSeenDone) {
  // The watcher runs outside the table's lock, so it may read the store:
  // the turn is there when the job is first seen DONE.
  auto seen = std::make_shared<std::optional<v1::Session>>();
  auto done = std::make_shared<absl::Notification>();
  service_->RunTool(v1::JOB_KIND_COMPILE, Request(),
                    [this, seen, done](absl::StatusOr<v1::Job> job) {
                      ASSERT_TRUE(job.ok()) << job.status();
                      EXPECT_EQ(job->stage(), v1::STAGE_DONE);
                      absl::StatusOr<v1::Session> s = store_->GetSession("s");
                      if (s.ok()) *seen = *s;
                      done->Notify();
                    });
  ASSERT_TRUE(done->WaitForNotificationWithTimeout(absl::Seconds(60)));
  ASSERT_TRUE(seen->has_value());
  EXPECT_EQ((*seen)->turns(), 1);
  EXPECT_EQ((*seen)->last_tool(), "compile_kernel");
  EXPECT_EQ((*seen)->last_verdict(), v1::VERDICT_PASSED);
  EXPECT_EQ((*seen)->problem(), "gather_linear_fp32");
  // The stored job is DONE too (same transaction).
  absl::StatusOr<std::vector<v1::Turn>> turns = store_->ListTurns("s");
  ASSERT_TRUE(turns.ok());
  ASSERT_EQ(turns->size(), 1u);
  EXPECT_EQ(store_->GetJob((*turns)[0].job_id())->stage(), v1::STAGE_DONE);
}

TEST_F(JobServiceTest, RefusedCallsAreTurnsOfTheirSession) {
  v1::KernelRequest bad = Request();
  bad.set_problem("no_such_problem");
  absl::StatusOr<v1::Job> r = service_->Submit(v1::JOB_KIND_COMPILE, bad);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  // A GPU tool with no worker connected.
  absl::StatusOr<v1::Job> gpu =
      service_->Submit(v1::JOB_KIND_CORRECTNESS, Request());
  EXPECT_EQ(gpu.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(service_->GetGpuSpecs("s").status().code(),
            absl::StatusCode::kFailedPrecondition);

  absl::StatusOr<std::vector<v1::Turn>> turns = store_->ListTurns("s");
  ASSERT_TRUE(turns.ok());
  ASSERT_EQ(turns->size(), 3u);
  EXPECT_EQ((*turns)[0].tool(), "compile_kernel");
  EXPECT_EQ((*turns)[0].verdict(), v1::VERDICT_REJECTED);
  EXPECT_THAT((*turns)[0].message(), HasSubstr("refused: "));
  EXPECT_THAT((*turns)[0].message(), HasSubstr("no_such_problem"));
  EXPECT_TRUE((*turns)[0].job_id().empty());
  EXPECT_EQ((*turns)[1].tool(), "run_correctness");
  EXPECT_EQ((*turns)[1].verdict(), v1::VERDICT_ERROR);
  EXPECT_THAT((*turns)[1].message(), HasSubstr("no GPU worker"));
  EXPECT_EQ((*turns)[2].tool(), "get_gpu_specs");
  EXPECT_EQ(store_->GetSession("s")->last_tool(), "get_gpu_specs");

  // A refusal for a bad session id records nothing (there is no session to
  // record it in), and creates none.
  EXPECT_EQ(service_->Submit(v1::JOB_KIND_COMPILE, Request("bad\nid"))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->ListSessions(10)->size(), 1u);
  // A huge refused source leaves a bounded message.
  v1::KernelRequest huge = Request();
  huge.set_source(std::string(300 * 1024, 'x'));
  EXPECT_EQ(service_->Submit(v1::JOB_KIND_COMPILE, huge).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_LE(store_->ListTurns("s")->back().message().size(), 2100u);
}

TEST_F(JobServiceTest, APlanTooLargeForTheRunnerIsRefusedAsTheRequests) {
  // 250 KB of "B," is within the source limit but encodes to ~375 KB.
  std::string args;
  for (int i = 0; i < 125000; ++i) absl::StrAppend(&args, i ? "," : "", "B");
  v1::KernelRequest big = Request();
  big.set_source(
      absl::StrCat("// @kb launch gather_linear grid(1) block(1) args(", args,
                   ")\n", "extern \"C\" __global__ void gather_linear() {}\n"));
  const absl::Status s = service_->Submit(v1::JOB_KIND_COMPILE, big).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("launch plan is too large"));
}

TEST_F(JobServiceTest, AGpuJobIsLeasedCompletedAndFinishedOnce) {
  workers_->Touch(Worker(), absl::Now());
  absl::StatusOr<v1::Job> job =
      service_->Submit(v1::JOB_KIND_CORRECTNESS, Request());
  ASSERT_TRUE(job.ok()) << job.status();
  WaitForStage(job->id(), v1::STAGE_WAITING_GPU);

  auto lease = std::make_shared<std::optional<Scheduler::Lease>>();
  auto leased = std::make_shared<absl::Notification>();
  ASSERT_TRUE(scheduler_
                  ->RequestLease(Worker(), absl::Seconds(5),
                                 [lease, leased](auto l) {
                                   *lease = std::move(l);
                                   leased->Notify();
                                 })
                  .ok());
  ASSERT_TRUE(leased->WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(lease->has_value());
  EXPECT_EQ((*lease)->job.job_id(), job->id());
  EXPECT_FALSE((*lease)->job.cubin().empty());  // Compiled by kbd.
  WaitForStage(job->id(), v1::STAGE_RUNNING);

  const absl::Status completed = scheduler_->Complete(
      "host:gpu0", (*lease)->lease_id, PassedFor((*lease)->job));
  ASSERT_TRUE(completed.ok()) << completed;
  const v1::Job done = WaitForStage(job->id(), v1::STAGE_DONE);
  EXPECT_EQ(done.result().verdict(), v1::VERDICT_PASSED)
      << done.result().message();
  EXPECT_EQ(done.worker_id(), "host:gpu0");  // The lease's worker.
  // Cancelling a finished job changes nothing.
  absl::StatusOr<v1::Job> again = service_->Cancel(job->id());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->result().verdict(), v1::VERDICT_PASSED);
  absl::StatusOr<v1::Session> s = store_->GetSession("s");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->turns(), 1);
  EXPECT_EQ(s->last_tool(), "run_correctness");
}

// The timer tells a candidate's kernels from the baseline's by name.
TEST_F(JobServiceTest, AKernelNamedLikeABaselineKernelIsRefused) {
  v1::KernelRequest r = Request();
  std::string source =
      testing::ReadSourceFile("kernels/problems/softmax_fp32/example.cu");
  ASSERT_NE(source.find("@kb launch softmax "), std::string::npos);
  absl::StatusOr<v1::Job> ok = service_->Submit(v1::JOB_KIND_COMPILE, [&] {
    r.set_source(source);
    return r;
  }());
  EXPECT_TRUE(ok.ok()) << ok.status();
  source = absl::StrReplaceAll(
      source, {{"@kb launch softmax ", "@kb launch softmax_forward "},
               {"void softmax(", "void softmax_forward("}});
  r.set_source(source);
  absl::StatusOr<v1::Job> clash = service_->Submit(v1::JOB_KIND_COMPILE, r);
  EXPECT_EQ(clash.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(clash.status().message(),
              HasSubstr("kernel 'softmax_forward' has the name of a kernel of "
                        "problem 'softmax_fp32''s baseline"));
}

// A kbd whose runners run under a profiler multiplies every budget, so
// that a job slowed down by kernel replay is not killed at its budget.
TEST_F(JobServiceTest, TheBudgetScaleMultipliesEveryJobsBudget) {
  for (const int scale : {1, 20}) {
    Destroy();
    Build(absl::ZeroDuration(), scale);
    std::optional<Scheduler::Lease> lease =
        SubmitAndLease(v1::JOB_KIND_CORRECTNESS, Request());
    ASSERT_TRUE(lease.has_value());
    // gather_linear_fp32's budget is 10 s.
    EXPECT_EQ(lease->job.budget_ms(), 10000 * scale);
  }
}

// A golden-kernel problem's job carries its golden's and its baseline's
// cubins and plans, compiled by kbd for the job's arch; a baseline of
// library calls only has no cubin.
TEST_F(JobServiceTest, AGoldenProblemsJobCarriesItsKernels) {
  v1::KernelRequest row_sum = Request();
  row_sum.set_source(
      testing::ReadSourceFile("kernels/problems/row_sum_fp32/example.cu"));
  std::optional<Scheduler::Lease> lease =
      SubmitAndLease(v1::JOB_KIND_CORRECTNESS, row_sum);
  ASSERT_TRUE(lease.has_value());
  const v1::RunnerJob& job = lease->job;
  EXPECT_EQ(job.problem().name(), "row_sum_fp32");
  EXPECT_FALSE(job.golden_cubin().empty());
  ASSERT_GE(job.golden_plan().launches_size(), 1);
  EXPECT_FALSE(job.baseline_cubin().empty());
  ASSERT_GE(job.baseline_plan().launches_size(), 1);
  EXPECT_NE(job.golden_cubin(), job.baseline_cubin());

  v1::KernelRequest matmul = Request("s2");
  matmul.set_source(
      testing::ReadSourceFile("kernels/problems/matmul_fp32/example.cu"));
  lease = SubmitAndLease(v1::JOB_KIND_CORRECTNESS, matmul, "host:gpu1");
  ASSERT_TRUE(lease.has_value());
  EXPECT_FALSE(lease->job.golden_cubin().empty());
  EXPECT_TRUE(lease->job.baseline_cubin().empty());  // One matmul step.
  EXPECT_EQ(lease->job.baseline_plan().launches_size(), 0);
  EXPECT_TRUE(lease->job.expert_cubin().empty());  // It declares none.

  // A problem with an expert baseline: its file compiled too.
  v1::KernelRequest rmsnorm = Request("s3");
  rmsnorm.set_source(
      testing::ReadSourceFile("kernels/problems/rmsnorm_fp32/example.cu"));
  lease = SubmitAndLease(v1::JOB_KIND_CORRECTNESS, rmsnorm, "host:gpu2");
  ASSERT_TRUE(lease.has_value());
  EXPECT_FALSE(lease->job.expert_cubin().empty());
  ASSERT_EQ(lease->job.expert_plan().launches_size(), 1);
  EXPECT_EQ(lease->job.expert_plan().launches(0).entry(),
            "expert_rmsnorm_fused");
  EXPECT_NE(lease->job.expert_cubin(), lease->job.baseline_cubin());
}

// A candidate named like an expert baseline's kernel is refused, as one
// named like a baseline's is.
TEST_F(JobServiceTest, ACandidateNamedLikeTheExpertsKernelIsRefused) {
  v1::KernelRequest k = Request();
  k.set_problem("rmsnorm_fp32");
  k.set_source(
      testing::ReadSourceFile("kernels/problems/rmsnorm_fp32/expert.cu"));
  const absl::Status refused =
      service_->Submit(v1::JOB_KIND_COMPILE, k).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(),
              HasSubstr("kernel 'expert_rmsnorm_fused' has the name of a "
                        "kernel of problem 'rmsnorm_fp32''s expert baseline"));
}

TEST_F(JobServiceTest, CancelEndsAQueuedJob) {
  workers_->Touch(Worker(), absl::Now());
  absl::StatusOr<v1::Job> job =
      service_->Submit(v1::JOB_KIND_CORRECTNESS, Request());
  ASSERT_TRUE(job.ok()) << job.status();
  WaitForStage(job->id(), v1::STAGE_WAITING_GPU);
  EXPECT_EQ(scheduler_->QueueDepth(), 1);
  absl::StatusOr<v1::Job> cancelled = service_->Cancel(job->id());
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  EXPECT_EQ(cancelled->stage(), v1::STAGE_DONE);
  EXPECT_EQ(cancelled->result().verdict(), v1::VERDICT_CANCELLED);
  EXPECT_EQ(scheduler_->QueueDepth(), 0);
  EXPECT_EQ(store_->GetSession("s")->last_verdict(), v1::VERDICT_CANCELLED);
  EXPECT_EQ(service_->Cancel("j-000000000000").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(JobServiceTest, UnfinishedJobsRunAgainAfterARestart) {
  workers_->Touch(Worker(), absl::Now());
  absl::StatusOr<v1::Job> job =
      service_->Submit(v1::JOB_KIND_CORRECTNESS, Request());
  ASSERT_TRUE(job.ok()) << job.status();
  WaitForStage(job->id(), v1::STAGE_WAITING_GPU);
  // kbd stops with the job queued, and starts again on the same store.
  Destroy();
  Build(/*worker_grace=*/absl::Seconds(30));
  service_->Recover();
  const v1::Job again = WaitForStage(job->id(), v1::STAGE_WAITING_GPU);
  EXPECT_EQ(again.session_id(), "s");
  EXPECT_EQ(scheduler_->QueueDepth(), 1);
}

}  // namespace
}  // namespace kbench
