// Tests of Scheduler (server/core/scheduler.h): lost leases and retries
// (and their messages), cancellation, the no-worker timeout and waiter
// cancellation, arch matching, the immediate release of a restarted
// worker's lease, refused worker facts, and results that fail the sanity
// checks.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/scheduler.h"
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

TEST_F(SchedulerTest, LostLeaseIsRequeuedForAnotherWorker) {
  Start();
  AddAndEnqueue("j1");
  Scheduler::Lease first = MustLease("hostA:gpu0");
  EXPECT_EQ(first.attempt, 1);
  // hostA never heartbeats; hostB waits and gets the job back.
  std::shared_ptr<LeaseBox> box = Request("hostB:gpu0", absl::Seconds(5));
  ASSERT_TRUE(box->Wait());
  ASSERT_TRUE(box->lease().has_value());
  const Scheduler::Lease second = *box->lease();
  EXPECT_EQ(second.job.job_id(), "j1");
  EXPECT_EQ(second.attempt, 2);
  EXPECT_NE(second.lease_id, first.lease_id);
  EXPECT_EQ(FinishedCount(), 0u);

  const v1::Job job = GetJob("j1");
  EXPECT_EQ(job.stage(), v1::STAGE_RUNNING);
  EXPECT_EQ(job.worker_id(), "hostB:gpu0");
  EXPECT_EQ(job.attempts(), 2);
  // The old lease is gone.
  EXPECT_FALSE(
      scheduler_->Heartbeat("hostA:gpu0", first.lease_id, "").lease_valid);
  EXPECT_EQ(scheduler_->Complete("hostA:gpu0", first.lease_id, {}).code(),
            absl::StatusCode::kFailedPrecondition);
  std::optional<v1::WorkerGpu> a = WorkerState("hostA:gpu0");
  ASSERT_TRUE(a.has_value());
  EXPECT_FALSE(a->busy());
}

TEST_F(SchedulerTest, JobFailsAfterMaxAttemptsLostLeases) {
  Start();
  AddAndEnqueue("j1");
  Scheduler::Lease first = MustLease("hostA:gpu0");
  std::shared_ptr<LeaseBox> box = Request("hostB:gpu1", absl::Seconds(5));
  ASSERT_TRUE(box->Wait());
  ASSERT_TRUE(box->lease().has_value());
  EXPECT_EQ(box->lease()->attempt, 2);
  // hostB stops heartbeating too: 2 of 2 attempts lost.
  ASSERT_TRUE(Eventually([&] { return FinishedCount() == 1; }));
  auto finished = Finished();
  EXPECT_EQ(finished[0].first, "j1");
  const v1::JobResult& r = finished[0].second;
  EXPECT_EQ(r.verdict(), v1::VERDICT_ERROR);
  EXPECT_EQ(r.error().code(), static_cast<int>(absl::StatusCode::kUnavailable));
  EXPECT_THAT(r.error().message(), HasSubstr("hostB:gpu1"));
  EXPECT_THAT(r.error().message(), HasSubstr("2 times"));
  EXPECT_THAT(r.message(), HasSubstr("hostB:gpu1"));
  // Both workers that lost it are named, and how; the kernel is not blamed.
  EXPECT_THAT(r.message(), HasSubstr("hostA:gpu0 stopped heartbeating"));
  EXPECT_THAT(r.message(), HasSubstr("hostB:gpu1 stopped heartbeating"));
  EXPECT_THAT(r.message(), HasSubstr("not the kernel's fault"));
  EXPECT_THAT(r.message(), Not(HasSubstr("kernel may")));

  // Not re-queued again.
  EXPECT_EQ(scheduler_->QueueDepth(), 0);
  std::shared_ptr<LeaseBox> late =
      Request("hostC:gpu0", absl::Milliseconds(50));
  ASSERT_TRUE(late->Wait());
  EXPECT_FALSE(late->lease().has_value());
  EXPECT_EQ(FinishedCount(), 1u);
}

TEST_F(SchedulerTest, EnqueueCountsEarlierAttempts) {
  Start();
  AddAndEnqueue("j1", /*attempts=*/1);
  Scheduler::Lease lease = MustLease("hostA:gpu0");
  EXPECT_EQ(lease.attempt, 2);
  // That was the last allowed attempt: losing it fails the job.
  ASSERT_TRUE(Eventually([&] { return FinishedCount() == 1; }));
  EXPECT_EQ(Finished()[0].second.error().code(),
            static_cast<int>(absl::StatusCode::kUnavailable));
}

TEST_F(SchedulerTest, CancelOfQueuedJobRemovesIt) {
  Start();
  AddAndEnqueue("j1");
  AddAndEnqueue("j2");
  EXPECT_EQ(scheduler_->QueueDepth(), 2);
  EXPECT_TRUE(scheduler_->Cancel("j1"));
  EXPECT_EQ(scheduler_->QueueDepth(), 1);
  EXPECT_EQ(GetJob("j2").queue_position(), 1);
  EXPECT_TRUE(scheduler_->Cancel("j2"));
  EXPECT_EQ(scheduler_->QueueDepth(), 0);
  EXPECT_FALSE(scheduler_->Cancel("j2"));
  EXPECT_FALSE(scheduler_->Cancel("unknown"));

  std::shared_ptr<LeaseBox> box = Request("hostA:gpu0", absl::Milliseconds(50));
  ASSERT_TRUE(box->Wait());
  EXPECT_FALSE(box->lease().has_value());
  EXPECT_EQ(FinishedCount(), 0u);
}

TEST_F(SchedulerTest, CancelOfLeasedJobTellsTheWorker) {
  Start(/*worker_present=*/true, kLongTtl);
  AddAndEnqueue("j1");
  Scheduler::Lease lease = MustLease("hostA:gpu0");
  EXPECT_TRUE(scheduler_->Cancel("j1"));
  Scheduler::HeartbeatReply r =
      scheduler_->Heartbeat("hostA:gpu0", lease.lease_id, "trial 2/5");
  EXPECT_TRUE(r.lease_valid);
  EXPECT_TRUE(r.cancel);
  v1::JobResult result;
  result.set_verdict(v1::VERDICT_PASSED);
  EXPECT_TRUE(scheduler_->Complete("hostA:gpu0", lease.lease_id, result).ok());
  // The caller that cancelled finishes the job; the scheduler does not.
  EXPECT_EQ(FinishedCount(), 0u);
  EXPECT_EQ(scheduler_->Complete("hostA:gpu0", lease.lease_id, result).code(),
            absl::StatusCode::kFailedPrecondition);
  std::optional<v1::WorkerGpu> w = WorkerState("hostA:gpu0");
  ASSERT_TRUE(w.has_value());
  EXPECT_FALSE(w->busy());
}

TEST_F(SchedulerTest, CancelledLeaseThatIsLostIsNotRerun) {
  Start();
  AddAndEnqueue("j1");
  Scheduler::Lease lease = MustLease("hostA:gpu0");
  EXPECT_TRUE(scheduler_->Cancel("j1"));
  // No heartbeat: the lease is lost, and the job must not run again.
  std::shared_ptr<LeaseBox> box =
      Request("hostB:gpu0", absl::Milliseconds(600));
  ASSERT_TRUE(box->Wait());
  EXPECT_FALSE(box->lease().has_value());
  EXPECT_EQ(scheduler_->QueueDepth(), 0);
  EXPECT_EQ(FinishedCount(), 0u);
  EXPECT_FALSE(
      scheduler_->Heartbeat("hostA:gpu0", lease.lease_id, "").lease_valid);
}

TEST_F(SchedulerTest, QueuedJobFailsWhenNoWorkerIsConnected) {
  Start(/*worker_present=*/false);
  AddAndEnqueue("j1");
  EXPECT_THAT(GetJob("j1").stage_detail(),
              HasSubstr("waiting for a GPU worker to connect"));
  ASSERT_TRUE(Eventually([&] { return FinishedCount() == 1; }));
  auto finished = Finished();
  EXPECT_EQ(finished[0].first, "j1");
  EXPECT_EQ(finished[0].second.verdict(), v1::VERDICT_ERROR);
  EXPECT_EQ(finished[0].second.error().code(),
            static_cast<int>(absl::StatusCode::kUnavailable));
  EXPECT_THAT(finished[0].second.error().message(),
              HasSubstr("no GPU worker connected"));
  EXPECT_THAT(finished[0].second.error().message(), HasSubstr("kbworker"));
  EXPECT_EQ(scheduler_->QueueDepth(), 0);
}

TEST_F(SchedulerTest, QueuedJobWaitsWhileAWorkerIsConnected) {
  Start(/*worker_present=*/true);
  AddAndEnqueue("j1");
  // Two no-worker timeouts pass; the connected (busy) worker may come back.
  absl::SleepFor(absl::Milliseconds(700));
  EXPECT_EQ(FinishedCount(), 0u);
  EXPECT_EQ(scheduler_->QueueDepth(), 1);
  EXPECT_EQ(MustLease("idle:gpu0").job.job_id(), "j1");
}

TEST_F(SchedulerTest, CancelWaitDropsTheWaiter) {
  Start();
  int64_t waiter = 0;
  std::shared_ptr<LeaseBox> box =
      Request("hostA:gpu0", absl::Milliseconds(300), &waiter);
  scheduler_->CancelWait(waiter);
  AddAndEnqueue("j1");
  EXPECT_EQ(scheduler_->QueueDepth(), 1);
  // Past the waiter's deadline: its reply is never called.
  absl::SleepFor(absl::Milliseconds(600));
  EXPECT_EQ(box->calls(), 0);
  EXPECT_EQ(scheduler_->QueueDepth(), 1);
  Scheduler::Lease lease = MustLease("hostA:gpu0");
  EXPECT_EQ(lease.job.job_id(), "j1");
  EXPECT_EQ(lease.attempt, 1);
  EXPECT_EQ(box->calls(), 0);
}

TEST_F(SchedulerTest, TwoPollingWorkersGetDifferentJobs) {
  Start(/*worker_present=*/true, kLongTtl);
  std::shared_ptr<LeaseBox> a, b;
  std::thread ta([&] { a = Request("hostA:gpu0", absl::Seconds(5)); });
  std::thread tb([&] { b = Request("hostB:gpu0", absl::Seconds(5)); });
  ta.join();
  tb.join();
  AddAndEnqueue("j1");
  AddAndEnqueue("j2");
  AddAndEnqueue("j3");
  ASSERT_TRUE(a->Wait());
  ASSERT_TRUE(b->Wait());
  ASSERT_TRUE(a->lease().has_value());
  ASSERT_TRUE(b->lease().has_value());
  EXPECT_EQ(a->calls(), 1);
  EXPECT_EQ(b->calls(), 1);
  EXPECT_NE(a->lease()->job.job_id(), b->lease()->job.job_id());
  EXPECT_NE(a->lease()->lease_id, b->lease()->lease_id);
  // One lease per request: the third job still waits.
  EXPECT_EQ(scheduler_->QueueDepth(), 1);
  EXPECT_EQ(GetJob("j3").stage(), v1::STAGE_WAITING_GPU);
  EXPECT_EQ(GetJob("j3").queue_position(), 1);
  EXPECT_EQ(WorkerState("hostA:gpu0")->current_job_id(),
            a->lease()->job.job_id());
  EXPECT_EQ(WorkerState("hostB:gpu0")->current_job_id(),
            b->lease()->job.job_id());
}

TEST_F(SchedulerTest, JobsGoOnlyToWorkersOfTheirArch) {
  Start(/*worker_present=*/true, kLongTtl);
  AddAndEnqueue("j80", 0, "sm_80");
  // An sm_90 worker never gets the sm_80 cubin.
  std::shared_ptr<LeaseBox> h100 =
      Request("hopper:gpu0", absl::Milliseconds(200), nullptr, "sm_90");
  ASSERT_TRUE(h100->Wait());
  EXPECT_FALSE(h100->lease().has_value());
  EXPECT_EQ(scheduler_->QueueDepth(), 1);
  // A later sm_90 job passes the waiting sm_80 one on an sm_90 worker.
  AddAndEnqueue("j90", 0, "sm_90");
  std::shared_ptr<LeaseBox> again =
      Request("hopper:gpu0", absl::Seconds(5), nullptr, "sm_90");
  ASSERT_TRUE(again->Wait());
  ASSERT_TRUE(again->lease().has_value());
  EXPECT_EQ(again->lease()->job.job_id(), "j90");
  // The sm_80 worker gets its job.
  std::shared_ptr<LeaseBox> a100 =
      Request("ampere:gpu0", absl::Seconds(5), nullptr, "sm_80");
  ASSERT_TRUE(a100->Wait());
  ASSERT_TRUE(a100->lease().has_value());
  EXPECT_EQ(a100->lease()->job.job_id(), "j80");
  EXPECT_EQ(scheduler_->QueueDepth(), 0);
}

TEST_F(SchedulerTest, QueuedJobFailsWhenNoWorkerHasItsArch) {
  Start(/*worker_present=*/true);
  AddAndEnqueue("j1", 0, "sm_80");
  EXPECT_THAT(GetJob("j1").stage_detail(),
              HasSubstr("waiting for a GPU worker to connect (the job needs "
                        "sm_80; connected: sm_90 (1 worker))"));
  // The sm_90 worker stays connected; the sm_80 job still times out.
  const absl::Time end = absl::Now() + absl::Seconds(5);
  while (FinishedCount() == 0 && absl::Now() < end) {
    workers_->Touch(Worker("idle:gpu0"), absl::Now());
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_EQ(FinishedCount(), 1u);
  const v1::JobResult r = Finished()[0].second;
  EXPECT_EQ(r.verdict(), v1::VERDICT_ERROR);
  EXPECT_EQ(r.error().code(), static_cast<int>(absl::StatusCode::kUnavailable));
  EXPECT_THAT(r.message(), HasSubstr("no GPU worker for sm_80"));
  EXPECT_THAT(r.message(), HasSubstr("connected: sm_90 (1 worker)"));
  EXPECT_EQ(scheduler_->QueueDepth(), 0);
}

TEST_F(SchedulerTest, RestartedWorkerGivesUpItsLeaseAtOnce) {
  Start(/*worker_present=*/true, kLongTtl);
  AddAndEnqueue("j1");
  const Scheduler::Lease first = MustLease("hostA:gpu0");
  // hostA comes back and asks for work: its old lease is gone at once (the
  // TTL is a minute), and the job is leased again, here to hostA itself.
  const absl::Time t0 = absl::Now();
  const Scheduler::Lease second = MustLease("hostA:gpu0");
  EXPECT_LT(absl::Now() - t0, absl::Seconds(1));
  EXPECT_EQ(second.job.job_id(), "j1");
  EXPECT_EQ(second.attempt, 2);
  EXPECT_NE(second.lease_id, first.lease_id);
  EXPECT_FALSE(
      scheduler_->Heartbeat("hostA:gpu0", first.lease_id, "").lease_valid);
  EXPECT_TRUE(
      scheduler_->Heartbeat("hostA:gpu0", second.lease_id, "").lease_valid);
  EXPECT_EQ(FinishedCount(), 0u);
  EXPECT_EQ(WorkerState("hostA:gpu0")->current_job_id(), "j1");
}

TEST_F(SchedulerTest, JobThatKeepsTakingWorkersDownNamesThemAndTheKernel) {
  Start(/*worker_present=*/true, kLongTtl);
  AddAndEnqueue("j1");
  MustLease("hostA:gpu0");
  MustLease("hostA:gpu0");  // Restarted mid-job: attempt 2 of 2.
  // Restarted again: the job has no attempt left.
  std::shared_ptr<LeaseBox> box = Request("hostA:gpu0", absl::Milliseconds(50));
  ASSERT_TRUE(Eventually([&] { return FinishedCount() == 1; }));
  const v1::JobResult r = Finished()[0].second;
  EXPECT_EQ(r.error().code(), static_cast<int>(absl::StatusCode::kUnavailable));
  EXPECT_THAT(r.message(), HasSubstr("hostA:gpu0 restarted while running it"));
  EXPECT_THAT(r.message(),
              HasSubstr("restarted 2 times while running this very job, so "
                        "the kernel may be taking them down"));
  ASSERT_TRUE(box->Wait());
  EXPECT_FALSE(box->lease().has_value());
}

TEST_F(SchedulerTest, AnOlderWaitOfTheSameWorkerIsAnsweredEmpty) {
  Start();
  std::shared_ptr<LeaseBox> stale = Request("hostA:gpu0", absl::Seconds(5));
  std::shared_ptr<LeaseBox> fresh = Request("hostA:gpu0", absl::Seconds(5));
  ASSERT_TRUE(stale->Wait(absl::Seconds(1)));
  EXPECT_FALSE(stale->lease().has_value());
  AddAndEnqueue("j1");
  ASSERT_TRUE(fresh->Wait());
  ASSERT_TRUE(fresh->lease().has_value());
  EXPECT_EQ(fresh->lease()->job.job_id(), "j1");
  EXPECT_EQ(stale->calls(), 1);
}

TEST_F(SchedulerTest, RefusedWorkerFactsAreReturnedAndNothingWaits) {
  Start();
  v1::WorkerInfo fake = Worker("rogue:gpu0");
  fake.mutable_spec()->set_max_threads_per_block(1);
  auto box = std::make_shared<LeaseBox>();
  absl::StatusOr<int64_t> id =
      scheduler_->RequestLease(fake, absl::Seconds(5), LeaseBox::Reply(box));
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(id.status().message(), HasSubstr("max_threads_per_block"));
  AddAndEnqueue("j1");
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(box->calls(), 0);
  EXPECT_EQ(scheduler_->QueueDepth(), 1);
  EXPECT_FALSE(WorkerState("rogue:gpu0").has_value());
}

TEST_F(SchedulerTest, InconsistentResultEndsTheJobWithInternalNotItsVerdict) {
  Start(/*worker_present=*/true, kLongTtl);
  AddAndEnqueue("j1");
  Scheduler::Lease lease = MustLease("hostA:gpu0");
  v1::JobResult forged = Passed();
  forged.mutable_correctness()->mutable_trials(0)->set_passed(false);
  forged.mutable_correctness()->mutable_trials(0)->set_mismatches(7);
  const absl::Status s =
      scheduler_->Complete("hostA:gpu0", lease.lease_id, forged);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("inconsistent"));
  ASSERT_TRUE(Eventually([&] { return FinishedCount() == 1; }));
  const v1::JobResult r = Finished()[0].second;
  EXPECT_EQ(r.verdict(), v1::VERDICT_ERROR);
  EXPECT_EQ(r.error().code(), static_cast<int>(absl::StatusCode::kInternal));
  EXPECT_THAT(r.message(), HasSubstr("hostA:gpu0 sent an inconsistent result"));
  EXPECT_THAT(r.message(), HasSubstr("not the kernel's verdict"));
  EXPECT_THAT(r.message(), HasSubstr("trial"));
  EXPECT_EQ(r.worker_id(), "hostA:gpu0");
  EXPECT_FALSE(r.has_correctness());
  // The lease is over, and the worker is free.
  EXPECT_FALSE(WorkerState("hostA:gpu0")->busy());
  EXPECT_EQ(scheduler_->Complete("hostA:gpu0", lease.lease_id, Passed()).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(SchedulerTest, ResultFromAnotherGpuIsRefused) {
  Start(/*worker_present=*/true, kLongTtl);
  AddAndEnqueue("j1");
  Scheduler::Lease lease = MustLease("hostA:gpu0");
  v1::JobResult r = Passed();
  r.mutable_gpu()->set_name("NVIDIA B300 (made up)");
  EXPECT_EQ(scheduler_->Complete("hostA:gpu0", lease.lease_id, r).code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(Eventually([&] { return FinishedCount() == 1; }));
  EXPECT_THAT(Finished()[0].second.message(), HasSubstr("B300"));
  EXPECT_EQ(Finished()[0].second.verdict(), v1::VERDICT_ERROR);
}

}  // namespace
}  // namespace kbench
