#include "server/core/core.h"

#include <string>
#include <utility>

namespace kbench {

Core::Core(const Options& options, const Deps& deps) {
  workers_ = std::make_unique<WorkerRegistry>(WorkerRegistry::Options{});
  jobs_ = std::make_unique<JobTable>(JobTable::Options{}, deps.store);
  sessions_ = std::make_unique<Sessions>(Sessions::Options{}, deps.store);
  finisher_ =
      std::make_unique<JobFinisher>(JobFinisher::Options{}, deps.problems,
                                    jobs_.get(), sessions_.get(), deps.metrics);
  // No two-phase set-up: the finisher exists before the scheduler that
  // reports to it.
  scheduler_ = std::make_unique<Scheduler>(
      options.scheduler, jobs_.get(), workers_.get(),
      [finisher = finisher_.get()](const std::string& id,
                                   v1::JobResult result) {
        finisher->Finish(id, std::move(result));
      });
  JobService::Deps jd;
  jd.store = deps.store;
  jd.problems = deps.problems;
  jd.compiler = deps.compiler;
  jd.workers = workers_.get();
  jd.jobs = jobs_.get();
  jd.sessions = sessions_.get();
  jd.scheduler = scheduler_.get();
  jd.finisher = finisher_.get();
  if (deps.holdout_keys == nullptr) own_keys_ = HoldoutKeys::Ephemeral();
  jd.holdout_keys =
      deps.holdout_keys != nullptr ? deps.holdout_keys : own_keys_.get();
  job_service_ = std::make_unique<JobService>(options.job_service, jd);
  sweep_service_ = std::make_unique<SweepService>(
      options.sweep_service, job_service_.get(), deps.store);
  agent_service_ =
      std::make_unique<AgentService>(AgentService::Options{}, sessions_.get(),
                                     deps.store, deps.problems, jobs_.get());
}

Core::~Core() {
  // Reverse of construction, spelled out: the scheduler's threads stop
  // before the finisher they call, the job service before the scheduler.
  agent_service_.reset();
  sweep_service_.reset();
  job_service_.reset();
  scheduler_.reset();
  finisher_.reset();
  sessions_.reset();
  jobs_.reset();
  workers_.reset();
  own_keys_.reset();
}

}  // namespace kbench
