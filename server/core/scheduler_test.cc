// Tests of Scheduler (server/core/scheduler.h): leases and long-polls,
// stages, heartbeats and completion (scheduler_loss_test.cc has lost
// leases, cancellation, timeouts, arch matching and refused results).
#include "server/core/scheduler.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/scheduler_fixtures.h"
#include "testing/eventually.h"

namespace kbench {
namespace {

using testing::Eventually;
using ::testing::HasSubstr;
using testing::kLongTtl;
using testing::LeaseBox;
using ::testing::Not;
using testing::Passed;
using testing::SchedulerTest;
using testing::Worker;

TEST_F(SchedulerTest, QueuedJobIsLeasedAtOnce) {
  Start(/*worker_present=*/true, kLongTtl);
  AddAndEnqueue("j1");
  EXPECT_EQ(scheduler_->QueueDepth(), 1);
  std::shared_ptr<LeaseBox> box = Request("hostA:gpu0");
  ASSERT_TRUE(box->Wait());
  EXPECT_EQ(box->calls(), 1);
  std::optional<Scheduler::Lease> lease = box->lease();
  ASSERT_TRUE(lease.has_value());
  EXPECT_FALSE(lease->lease_id.empty());
  EXPECT_EQ(lease->attempt, 1);
  EXPECT_EQ(lease->ttl, kLongTtl);
  EXPECT_EQ(lease->job.job_id(), "j1");
  EXPECT_EQ(lease->job.seed(), 7u);
  EXPECT_EQ(lease->job.source(), "__global__ void k() {}");
  EXPECT_EQ(scheduler_->QueueDepth(), 0);

  const v1::Job job = GetJob("j1");
  EXPECT_EQ(job.stage(), v1::STAGE_RUNNING);
  EXPECT_EQ(job.worker_id(), "hostA:gpu0");
  EXPECT_EQ(job.attempts(), 1);
  EXPECT_EQ(job.queue_position(), 0);
  std::optional<v1::WorkerGpu> w = WorkerState("hostA:gpu0");
  ASSERT_TRUE(w.has_value());
  EXPECT_TRUE(w->busy());
  EXPECT_EQ(w->current_job_id(), "j1");
}

TEST_F(SchedulerTest, WaitingRequestGetsALaterJob) {
  Start(/*worker_present=*/true, kLongTtl);
  std::shared_ptr<LeaseBox> box = Request("hostA:gpu0", absl::Seconds(2));
  EXPECT_EQ(box->calls(), 0);
  AddAndEnqueue("j1");
  ASSERT_TRUE(box->Wait());
  EXPECT_EQ(box->calls(), 1);
  ASSERT_TRUE(box->lease().has_value());
  EXPECT_EQ(box->lease()->job.job_id(), "j1");
  EXPECT_EQ(box->lease()->attempt, 1);
  EXPECT_EQ(scheduler_->QueueDepth(), 0);
}

TEST_F(SchedulerTest, LongPollWithoutJobEndsWithNothing) {
  Start();
  std::shared_ptr<LeaseBox> box = Request("hostA:gpu0", absl::Milliseconds(50));
  ASSERT_TRUE(box->Wait());
  EXPECT_EQ(box->calls(), 1);
  EXPECT_FALSE(box->lease().has_value());
  // A job queued afterwards is not handed to the finished poll.
  AddAndEnqueue("j1");
  EXPECT_EQ(scheduler_->QueueDepth(), 1);
  EXPECT_EQ(box->calls(), 1);
}

TEST_F(SchedulerTest, StagesGoWaitingGpuThenRunningWithQueuePositions) {
  Start(/*worker_present=*/true, kLongTtl);
  AddJob("j1");
  absl::Mutex mu;
  std::vector<v1::Stage> stages;
  ASSERT_TRUE(jobs_
                  ->Watch("j1",
                          [&](const v1::Job& j) {
                            absl::MutexLock lock(&mu);
                            if (stages.empty() || stages.back() != j.stage()) {
                              stages.push_back(j.stage());
                            }
                          })
                  .ok());
  scheduler_->Enqueue("j1", RunnerJobFor("j1"), 0);
  AddAndEnqueue("j2");

  v1::Job j1 = GetJob("j1");
  EXPECT_EQ(j1.stage(), v1::STAGE_WAITING_GPU);
  EXPECT_EQ(j1.queue_position(), 1);
  EXPECT_THAT(j1.stage_detail(), HasSubstr("waiting for a free GPU"));
  v1::Job j2 = GetJob("j2");
  EXPECT_EQ(j2.stage(), v1::STAGE_WAITING_GPU);
  EXPECT_EQ(j2.queue_position(), 2);
  EXPECT_THAT(j2.stage_detail(), HasSubstr("waiting for a free GPU"));

  Scheduler::Lease lease = MustLease("hostA:gpu0");
  EXPECT_EQ(lease.job.job_id(), "j1");
  j1 = GetJob("j1");
  EXPECT_EQ(j1.stage(), v1::STAGE_RUNNING);
  EXPECT_EQ(j1.queue_position(), 0);
  EXPECT_THAT(j1.stage_detail(), HasSubstr("hostA:gpu0"));
  j2 = GetJob("j2");
  EXPECT_EQ(j2.stage(), v1::STAGE_WAITING_GPU);
  EXPECT_EQ(j2.queue_position(), 1);

  absl::MutexLock lock(&mu);
  EXPECT_THAT(stages,
              ::testing::ElementsAre(v1::STAGE_QUEUED, v1::STAGE_WAITING_GPU,
                                     v1::STAGE_RUNNING));
}

TEST_F(SchedulerTest, HeartbeatsKeepALeaseAndUpdateTheDetail) {
  Start();
  AddAndEnqueue("j1");
  Scheduler::Lease lease = MustLease("hostA:gpu0");
  // Another worker waits meanwhile: the job must not come back to the queue.
  std::shared_ptr<LeaseBox> other =
      Request("hostB:gpu0", absl::Milliseconds(600));
  // 3 TTLs of heartbeats every 20 ms.
  const absl::Time end = absl::Now() + absl::Milliseconds(600);
  int beats = 0;
  while (absl::Now() < end) {
    Scheduler::HeartbeatReply r = scheduler_->Heartbeat(
        "hostA:gpu0", lease.lease_id, absl::StrCat("trial ", ++beats));
    ASSERT_TRUE(r.lease_valid) << "after " << beats << " heartbeats";
    EXPECT_FALSE(r.cancel);
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(GetJob("j1").stage_detail(), absl::StrCat("trial ", beats));
  EXPECT_EQ(GetJob("j1").stage(), v1::STAGE_RUNNING);
  ASSERT_TRUE(other->Wait());
  EXPECT_FALSE(other->lease().has_value());
  EXPECT_EQ(FinishedCount(), 0u);
  EXPECT_TRUE(
      scheduler_->Complete("hostA:gpu0", lease.lease_id, Passed()).ok());
}

TEST_F(SchedulerTest, WrongLeaseOrWorkerIsNotValid) {
  Start(/*worker_present=*/true, kLongTtl);
  AddAndEnqueue("j1");
  Scheduler::Lease lease = MustLease("hostA:gpu0");
  EXPECT_FALSE(
      scheduler_->Heartbeat("hostA:gpu0", "no-such-lease", "").lease_valid);
  EXPECT_FALSE(
      scheduler_->Heartbeat("hostB:gpu0", lease.lease_id, "").lease_valid);
  absl::Status s =
      scheduler_->Complete("hostB:gpu0", lease.lease_id, v1::JobResult());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr(lease.lease_id));
  EXPECT_EQ(FinishedCount(), 0u);
  // The rightful holder still has it.
  EXPECT_TRUE(
      scheduler_->Heartbeat("hostA:gpu0", lease.lease_id, "").lease_valid);
}

TEST_F(SchedulerTest, CompleteFinishesTheJobOnce) {
  Start(/*worker_present=*/true, kLongTtl);
  AddAndEnqueue("j1");
  Scheduler::Lease lease = MustLease("hostA:gpu0");
  v1::JobResult result = Passed();
  result.set_worker_id("hostA:gpu0");
  result.set_runner_ms(12.5);
  // A compile report is kbd's: a worker's (here one contradicting PASSED)
  // is dropped.
  result.mutable_compile()->set_success(false);
  ASSERT_TRUE(scheduler_->Complete("hostA:gpu0", lease.lease_id, result).ok());
  ASSERT_TRUE(Eventually([&] { return FinishedCount() == 1; }));
  auto finished = Finished();
  EXPECT_EQ(finished[0].first, "j1");
  EXPECT_EQ(finished[0].second.verdict(), v1::VERDICT_PASSED);
  EXPECT_EQ(finished[0].second.runner_ms(), 12.5);
  EXPECT_FALSE(finished[0].second.has_compile());

  absl::Status again =
      scheduler_->Complete("hostA:gpu0", lease.lease_id, result);
  EXPECT_EQ(again.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(again.message(), HasSubstr(lease.lease_id));
  EXPECT_FALSE(
      scheduler_->Heartbeat("hostA:gpu0", lease.lease_id, "").lease_valid);
  EXPECT_EQ(FinishedCount(), 1u);

  std::optional<v1::WorkerGpu> w = WorkerState("hostA:gpu0");
  ASSERT_TRUE(w.has_value());
  EXPECT_FALSE(w->busy());
  EXPECT_EQ(w->jobs_done(), 1);
}

}  // namespace
}  // namespace kbench
