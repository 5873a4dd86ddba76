// A fixture of JobService, kbd's core, in-process: a real Store and kbd's
// holdout secret file in a temp directory, the source tree's problems,
// NVRTC in this process (no sandbox), the job table, sessions, finisher and
// scheduler as kbd wires them (Core), and a worker played by the test
// through the Scheduler. Used by job_service_test.cc and
// holdout_jobs_test.cc.
//
// Header only (test code). Thread safety: one test thread.
#ifndef KBENCH_SERVER_CORE_JOB_SERVICE_FIXTURES_H_
#define KBENCH_SERVER_CORE_JOB_SERVICE_FIXTURES_H_

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "compiler/nvrtc_compiler.h"
#include "server/core/core.h"
#include "server/core/holdout_keys.h"
#include "server/core/job_service.h"
#include "server/core/scheduler_fixtures.h"
#include "testing/eventually.h"
#include "testing/process.h"

namespace kbench::testing {

// The GPU worker the tests play.
inline v1::WorkerInfo Worker() { return testing::Worker("host:gpu0"); }

// What an honest worker reports for `job`: every trial of every shape
// passed.
inline v1::JobResult PassedFor(const v1::RunnerJob& job) {
  v1::JobResult r;
  r.set_verdict(v1::VERDICT_PASSED);
  r.mutable_gpu()->set_name("Test GPU");
  r.mutable_gpu()->set_arch("sm_90");
  v1::CorrectnessReport* c = r.mutable_correctness();
  c->set_passed(true);
  int trials = 0;
  for (const v1::ShapeSet& set : job.check_sets()) {
    for (const v1::Shape& shape : set.shapes()) {
      const int n = set.trials() > 0 ? set.trials() : job.trials();
      for (int i = 0; i < n; ++i) {
        v1::TrialResult* t = c->add_trials();
        t->set_shape_set(set.name());
        t->set_shape(shape.name());
        t->set_passed(true);
        ++trials;
      }
    }
  }
  c->set_trials_run(trials);
  c->set_trials_passed(trials);
  return r;
}

class JobServiceFixture : public ::testing::Test {
 protected:
  void SetUp() override { Build(); }

  // Builds the core (as server/kbd.cc does) on the store in dir_.
  void Build(absl::Duration worker_grace = absl::ZeroDuration(),
             int budget_scale = 1, int max_unfinished_jobs = 4096) {
    auto store = Store::Open({dir_.path() + "/kbench.db"});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    auto problems =
        ProblemRegistry::LoadDir(testing::SourcePath("kernels/problems"));
    ASSERT_TRUE(problems.ok()) << problems.status();
    problems_ = *std::move(problems);
    CompileService::Options co;
    co.threads = 2;
    compile_ = std::make_unique<CompileService>(co, &compiler_, store_.get());
    Core::Options o;
    o.job_service.worker_grace = worker_grace;
    o.job_service.budget_scale = budget_scale;
    o.job_service.max_unfinished_jobs = max_unfinished_jobs;
    // kbd's secret file in the same directory: a restart keeps it.
    auto keys = HoldoutKeys::Load({"", dir_.path()});
    ASSERT_TRUE(keys.ok()) << keys.status();
    keys_ = *std::move(keys);
    core_ = std::make_unique<Core>(
        o, Core::Deps{store_.get(), problems_.get(), compile_.get(), nullptr,
                      keys_.get()});
    workers_ = core_->workers();
    jobs_ = core_->jobs();
    sessions_ = core_->sessions();
    scheduler_ = core_->scheduler();
    service_ = core_->job_service();
  }

  void TearDown() override { Destroy(); }
  void Destroy() {
    if (compile_) compile_->Shutdown();
    core_.reset();
    compile_.reset();
    problems_.reset();
    store_.reset();
    keys_.reset();
  }

  v1::KernelRequest Request(const std::string& session = "s") {
    v1::KernelRequest r;
    r.set_source(
        testing::ReadSourceFile("kernels/examples/gather_linear_naive.cu"));
    r.set_session_id(session);
    return r;
  }

  // RunTool, waited for.
  absl::StatusOr<v1::Job> RunTool(v1::JobKind kind,
                                  const v1::KernelRequest& request) {
    auto done = std::make_shared<absl::Notification>();
    auto out = std::make_shared<absl::StatusOr<v1::Job>>();
    service_->RunTool(kind, request, [done, out](absl::StatusOr<v1::Job> j) {
      *out = std::move(j);
      done->Notify();
    });
    EXPECT_TRUE(done->WaitForNotificationWithTimeout(absl::Seconds(60)));
    return *out;
  }

  v1::Job WaitForStage(const std::string& id, v1::Stage stage) {
    v1::Job job;
    EXPECT_TRUE(Eventually(
        [&] {
          absl::StatusOr<v1::Job> j = service_->GetJob(id);
          if (j.ok()) job = *j;
          return j.ok() && j->stage() == stage;
        },
        absl::Seconds(20)))
        << "job " << id << " is " << v1::Stage_Name(job.stage());
    return job;
  }

  // Submits `request` as `kind` with worker `worker_id` connected and
  // leases its job as that worker would; the lease (empty on a failure).
  // A worker that asks again while holding a lease gives that lease up, so
  // a test holding several leases uses a worker id for each.
  std::optional<Scheduler::Lease> SubmitAndLease(
      v1::JobKind kind, const v1::KernelRequest& request,
      const std::string& worker_id = "host:gpu0") {
    const v1::WorkerInfo worker = testing::Worker(worker_id);
    workers_->Touch(worker, absl::Now());
    absl::StatusOr<v1::Job> job = service_->Submit(kind, request);
    EXPECT_TRUE(job.ok()) << job.status();
    if (!job.ok()) return std::nullopt;
    WaitForStage(job->id(), v1::STAGE_WAITING_GPU);
    return LeaseAs(worker);
  }

  // Asks for a lease as `worker` would (waiting up to `wait` for a job);
  // the lease, empty when none came.
  std::optional<Scheduler::Lease> LeaseAs(
      const v1::WorkerInfo& worker, absl::Duration wait = absl::Seconds(5)) {
    auto lease = std::make_shared<std::optional<Scheduler::Lease>>();
    auto leased = std::make_shared<absl::Notification>();
    EXPECT_TRUE(scheduler_
                    ->RequestLease(worker, wait,
                                   [lease, leased](auto l) {
                                     *lease = std::move(l);
                                     leased->Notify();
                                   })
                    .ok());
    EXPECT_TRUE(
        leased->WaitForNotificationWithTimeout(wait + absl::Seconds(5)));
    return *lease;
  }

  // The problem a Request() without a problem runs.
  const v1::Problem& job_problem() const {
    return **problems_->Find("gather_linear_fp32");
  }

  testing::TempDir dir_;
  NvrtcCompiler compiler_;
  std::unique_ptr<HoldoutKeys> keys_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<ProblemRegistry> problems_;
  std::unique_ptr<CompileService> compile_;
  std::unique_ptr<Core> core_;
  // The core's parts, borrowed from core_.
  WorkerRegistry* workers_ = nullptr;
  JobTable* jobs_ = nullptr;
  Sessions* sessions_ = nullptr;
  Scheduler* scheduler_ = nullptr;
  JobService* service_ = nullptr;
};

}  // namespace kbench::testing

#endif  // KBENCH_SERVER_CORE_JOB_SERVICE_FIXTURES_H_
