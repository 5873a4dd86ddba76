// Tests of Scheduler (server/core/scheduler.h) with a real JobTable on an
// in-memory Store and a WorkerRegistry: leases and long-polls, stages,
// heartbeats, completion, lost leases and retries (and their messages),
// cancellation, the no-worker timeout and waiter cancellation, arch
// matching, the immediate release of a restarted worker's lease, refused
// worker facts, and results that fail the sanity checks. Timeouts are short
// (lease TTL 200 ms, tick 10 ms); asynchronous outcomes are awaited with
// bounded polls.
#include "server/core/scheduler.h"

#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/eventually.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using testing::Eventually;

// Collects the replies to one RequestLease. Shared with the reply so it may
// be called after the test body (the scheduler's destructor).
class LeaseBox {
 public:
  static Scheduler::LeaseReply Reply(std::shared_ptr<LeaseBox> box) {
    return [box](std::optional<Scheduler::Lease> lease) {
      absl::MutexLock lock(&box->mu_);
      ++box->calls_;
      box->lease_ = std::move(lease);
    };
  }
  int calls() const {
    absl::MutexLock lock(&mu_);
    return calls_;
  }
  // Waits up to `timeout` for the reply.
  bool Wait(absl::Duration timeout = absl::Seconds(5)) {
    return Eventually([this] { return calls() > 0; }, timeout);
  }
  std::optional<Scheduler::Lease> lease() const {
    absl::MutexLock lock(&mu_);
    return lease_;
  }

 private:
  mutable absl::Mutex mu_;
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<Scheduler::Lease> lease_ ABSL_GUARDED_BY(mu_);
};

// For tests that hold a lease without heartbeating.
constexpr absl::Duration kLongTtl = absl::Seconds(60);

v1::WorkerInfo Worker(const std::string& id,
                      const std::string& arch = "sm_90") {
  v1::WorkerInfo info;
  info.set_worker_id(id);
  info.set_hostname("host");
  info.mutable_spec()->set_name("Test GPU");
  info.mutable_spec()->set_arch(arch);
  info.mutable_spec()->set_sm_count(132);
  info.mutable_spec()->set_max_threads_per_block(1024);
  return info;
}

// What an honest worker reports for RunnerJobFor's job: every shape passed.
v1::JobResult Passed() {
  v1::JobResult r;
  r.set_verdict(v1::VERDICT_PASSED);
  r.mutable_gpu()->set_name("Test GPU");
  r.mutable_gpu()->set_arch("sm_90");
  v1::CorrectnessReport* c = r.mutable_correctness();
  c->set_passed(true);
  v1::TrialResult* t = c->add_trials();
  t->set_shape_set("default");
  t->set_shape("s1");
  t->set_passed(true);
  c->set_trials_run(1);
  c->set_trials_passed(1);
  return r;
}

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Store::Options store_options;
    store_options.path = ":memory:";
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(store_options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    jobs_ = std::make_unique<JobTable>(JobTable::Options(), store_.get());
    workers_ = std::make_unique<WorkerRegistry>(WorkerRegistry::Options());
  }

  // Starts the scheduler. With `worker_present`, a worker ("idle:gpu0") has
  // just been seen, so queued jobs do not hit the no-worker timeout. Tests
  // that inspect a lease without heartbeating pass a long `lease_ttl`, so a
  // stall of the test thread cannot expire it.
  void Start(bool worker_present = true,
             absl::Duration lease_ttl = absl::Milliseconds(200)) {
    if (worker_present) workers_->Touch(Worker("idle:gpu0"), absl::Now());
    Scheduler::Options o;
    o.lease_ttl = lease_ttl;
    o.tick = absl::Milliseconds(10);
    o.no_worker_timeout = absl::Milliseconds(300);
    o.max_attempts = 2;
    scheduler_ = std::make_unique<Scheduler>(
        o, jobs_.get(), workers_.get(),
        [this](const std::string& job_id, v1::JobResult result) {
          absl::MutexLock lock(&finish_mu_);
          finished_.emplace_back(job_id, std::move(result));
        });
  }

  // Inserts a QUEUED job into the JobTable.
  void AddJob(const std::string& id) {
    v1::Job job;
    job.set_id(id);
    job.set_kind(v1::JOB_KIND_CORRECTNESS);
    job.set_stage(v1::STAGE_QUEUED);
    job.set_created_unix_ms(absl::ToUnixMillis(absl::Now()));
    ASSERT_TRUE(jobs_->Insert(job, v1::KernelRequest()).ok());
  }

  v1::RunnerJob RunnerJobFor(const std::string& id, uint64_t seed = 7) {
    v1::RunnerJob job;
    job.set_job_id(id);
    job.set_kind(v1::JOB_KIND_CORRECTNESS);
    job.set_source("__global__ void k() {}");
    job.set_seed(seed);
    job.set_cubin_arch("sm_90");
    v1::ShapeSet* set = job.add_check_sets();
    set->set_name("default");
    set->add_shapes()->set_name("s1");
    return job;
  }

  // Inserts and enqueues a job (compiled for `arch`).
  void AddAndEnqueue(const std::string& id, int attempts = 0,
                     const std::string& arch = "sm_90") {
    AddJob(id);
    v1::RunnerJob job = RunnerJobFor(id);
    job.set_cubin_arch(arch);
    scheduler_->Enqueue(id, std::move(job), attempts);
  }

  // Requests a lease as a worker of `arch`; returns the box its reply goes
  // to.
  std::shared_ptr<LeaseBox> Request(const std::string& worker_id,
                                    absl::Duration wait = absl::Seconds(5),
                                    int64_t* waiter_id = nullptr,
                                    const std::string& arch = "sm_90") {
    auto box = std::make_shared<LeaseBox>();
    const absl::StatusOr<int64_t> id = scheduler_->RequestLease(
        Worker(worker_id, arch), wait, LeaseBox::Reply(box));
    EXPECT_TRUE(id.ok()) << id.status();
    if (waiter_id != nullptr) *waiter_id = id.value_or(0);
    return box;
  }

  // Requests a lease and expects one at once (a job is queued).
  Scheduler::Lease MustLease(const std::string& worker_id) {
    std::shared_ptr<LeaseBox> box = Request(worker_id);
    EXPECT_TRUE(box->Wait());
    std::optional<Scheduler::Lease> lease = box->lease();
    EXPECT_TRUE(lease.has_value()) << worker_id << " got no lease";
    return lease.value_or(Scheduler::Lease());
  }

  v1::Job GetJob(const std::string& id) {
    absl::StatusOr<v1::Job> job = jobs_->Get(id);
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? *job : v1::Job();
  }

  std::vector<std::pair<std::string, v1::JobResult>> Finished() {
    absl::MutexLock lock(&finish_mu_);
    return finished_;
  }
  size_t FinishedCount() { return Finished().size(); }

  std::optional<v1::WorkerGpu> WorkerState(const std::string& id) {
    for (const v1::WorkerGpu& g : workers_->Live(absl::Now())) {
      if (g.worker_id() == id) return g;
    }
    return std::nullopt;
  }

  std::unique_ptr<Store> store_;
  std::unique_ptr<JobTable> jobs_;
  std::unique_ptr<WorkerRegistry> workers_;
  absl::Mutex finish_mu_;
  std::vector<std::pair<std::string, v1::JobResult>> finished_
      ABSL_GUARDED_BY(finish_mu_);
  // Last: destroyed first, before what it borrows.
  std::unique_ptr<Scheduler> scheduler_;
};

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
