// Core: the server core's objects, built in dependency order and destroyed
// in reverse: the worker registry, job table, sessions, job finisher,
// scheduler (which reports finished leases to the finisher), job service,
// sweep service and agent service. kbd's composition root (server/kbd.cc)
// builds one on its store, problems and compile service, and the core's own
// tests build the same one, so that what they test is what kbd runs.
//
// Ownership: owns the objects above; borrows the Deps, which must outlive
// it. Call the compile service's Shutdown() before destroying a Core that
// has jobs compiling: their callbacks report to the job service.
// Thread safety: the accessors may be called from any thread; the objects
// document their own.
#ifndef KBENCH_SERVER_CORE_CORE_H_
#define KBENCH_SERVER_CORE_CORE_H_

#include <memory>

#include "base/metrics.h"
#include "contract/problem_registry.h"
#include "server/core/agent_service.h"
#include "server/core/compile_service.h"
#include "server/core/holdout_keys.h"
#include "server/core/job_finisher.h"
#include "server/core/job_service.h"
#include "server/core/job_table.h"
#include "server/core/scheduler.h"
#include "server/core/sessions.h"
#include "server/core/sweep_service.h"
#include "server/core/worker_registry.h"
#include "server/store/store.h"

namespace kbench {

class Core {
 public:
  struct Options {
    // Leases, attempts and the no-worker timeout.
    Scheduler::Options scheduler;
    // Worker grace, timing limits.
    JobService::Options job_service;
    // Sweep size limits.
    SweepService::Options sweep_service;
  };
  // What the core uses and does not own.
  struct Deps {
    Store* store = nullptr;
    const ProblemRegistry* problems = nullptr;
    CompileService* compiler = nullptr;
    // Job counters and histograms; null records none.
    Metrics* metrics = nullptr;
    // The secret hidden cases are drawn from; null: one of this Core only
    // (HoldoutKeys::Ephemeral), as in the core's tests.
    const HoldoutKeys* holdout_keys = nullptr;
  };

  Core(const Options& options, const Deps& deps);
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;
  ~Core();

  WorkerRegistry* workers() const { return workers_.get(); }
  JobTable* jobs() const { return jobs_.get(); }
  Sessions* sessions() const { return sessions_.get(); }
  JobFinisher* finisher() const { return finisher_.get(); }
  Scheduler* scheduler() const { return scheduler_.get(); }
  JobService* job_service() const { return job_service_.get(); }
  SweepService* sweep_service() const { return sweep_service_.get(); }
  AgentService* agent_service() const { return agent_service_.get(); }

 private:
  std::unique_ptr<HoldoutKeys> own_keys_;  // When Deps gave none.
  std::unique_ptr<WorkerRegistry> workers_;
  std::unique_ptr<JobTable> jobs_;
  std::unique_ptr<Sessions> sessions_;
  std::unique_ptr<JobFinisher> finisher_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<JobService> job_service_;
  std::unique_ptr<SweepService> sweep_service_;
  std::unique_ptr<AgentService> agent_service_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_CORE_H_
