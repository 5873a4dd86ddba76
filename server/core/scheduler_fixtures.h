// The fixture of the Scheduler tests (server/core/scheduler_test.cc,
// scheduler_loss_test.cc): a real JobTable on an in-memory Store, a
// WorkerRegistry, workers and their replies, and an honest result. Timeouts
// are short (lease TTL 200 ms, tick 10 ms); asynchronous outcomes are
// awaited with bounded polls.
#ifndef KBENCH_SERVER_CORE_SCHEDULER_FIXTURES_H_
#define KBENCH_SERVER_CORE_SCHEDULER_FIXTURES_H_

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/scheduler.h"
#include "testing/eventually.h"

namespace kbench::testing {

// Collects the replies to one RequestLease. Shared with the reply so it may
// be called after the test body (the scheduler's destructor).
class LeaseBox {
 public:
  static Scheduler::LeaseReply Reply(const std::shared_ptr<LeaseBox>& box) {
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
inline constexpr absl::Duration kLongTtl = absl::Seconds(60);

// A worker of an H200-like GPU (the limits kbd checks plans against).
inline v1::WorkerInfo Worker(const std::string& id,
                             const std::string& arch = "sm_90") {
  v1::WorkerInfo info;
  info.set_worker_id(id);
  info.set_hostname("host");
  info.set_version(KBENCH_VERSION);
  info.mutable_spec()->set_name("Test GPU");
  info.mutable_spec()->set_arch(arch);
  info.mutable_spec()->set_sm_count(132);
  info.mutable_spec()->set_max_threads_per_block(1024);
  info.mutable_spec()->set_smem_per_block_bytes(48 * 1024);
  info.mutable_spec()->set_smem_per_block_optin_bytes(227 * 1024);
  return info;
}

// What an honest worker reports for RunnerJobFor's job: every shape passed.
inline v1::JobResult Passed() {
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

}  // namespace kbench::testing

#endif  // KBENCH_SERVER_CORE_SCHEDULER_FIXTURES_H_
