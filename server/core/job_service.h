// JobService: kbd's core. Every front end (gRPC now; HTTP and MCP later)
// translates its request and calls these methods; nothing here knows about
// a transport. A job goes
//   QUEUED -> COMPILING (CompileService, on CPU threads, cached)
//          -> [compile jobs end here]
//          -> WAITING_GPU (Scheduler queue) -> RUNNING (leased by a worker)
//          -> DONE (with a JobResult and a verdict).
// Requests that cannot be carried out are refused up front with a status a
// person or an LLM can act on (InvalidArgument, NotFound,
// FailedPrecondition); problems found after compiling end the job with an
// `error` in its result, which the tool calls return as their status.
// Calls that carry a session id are recorded as turns of that session.
//
// Jobs end through the JobFinisher (server/core/job_finisher.h), the
// Scheduler's results and this service's refusals alike; calls refused
// before a job exists are recorded as turns by Sessions.
//
// Ownership: borrows everything in Deps (all must outlive it).
// Thread safety: every method is thread safe.
#ifndef KBENCH_SERVER_CORE_JOB_SERVICE_H_
#define KBENCH_SERVER_CORE_JOB_SERVICE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "contract/job_defaults.h"
#include "contract/problem_registry.h"
#include "kbench/v1/kbench.pb.h"
#include "server/core/compile_service.h"
#include "server/core/holdout_keys.h"
#include "server/core/job_finisher.h"
#include "server/core/job_table.h"
#include "server/core/problem_kernels.h"
#include "server/core/scheduler.h"
#include "server/core/sessions.h"
#include "server/core/worker_registry.h"
#include "server/store/store.h"

namespace kbench {

// What JobService::Submit may be given beyond the request.
struct JobSubmitOptions {
  // The sweep the job belongs to (SweepService), if any.
  std::string sweep_id;
  // Room reserved for the job (JobService::Reserve, for a batch); null: the
  // submit reserves its own.
  JobTable::Reservation* room = nullptr;
};

class JobService {
 public:
  struct Options {
    // Largest kernel source accepted, in bytes.
    size_t max_source_bytes = 256 * 1024;
    // Problem used when neither the request nor the source names one.
    std::string default_problem = "gather_linear_fp32";
    // Compile target when no worker is connected and the request names none.
    std::string default_arch = "sm_90";
    // After start-up, GPU requests wait this long for a first worker (e.g.
    // local workers still starting) instead of failing at once.
    absl::Duration worker_grace = absl::Seconds(0);
    // Most correctness trials per shape a request may ask for.
    int max_trials = 100;
    // Timing: stop at this relative standard error of the median ...
    double timing_max_rel_stderr = kDefaultMaxRelStderr;
    // ... after at least this many samples ...
    int timing_min_samples = kDefaultMinSamples;
    // ... or when this much time (ms) was spent sampling.
    int timing_max_time_ms = kDefaultMaxTimeMs;
    // Every job's runner budget is multiplied by this (>= 1): for a kbd
    // whose runners run under a profiler (Nsight Compute replays each
    // kernel, so a job takes many times longer and would be killed at its
    // budget).
    int budget_scale = 1;
    // Most jobs unfinished at once (queued, compiling, waiting for or on a
    // GPU): past it a submit is RESOURCE_EXHAUSTED, so that no client can
    // fill kbd's memory and queue (a sweep counts all its kernels).
    int max_unfinished_jobs = 4096;
  };

  // What the service uses; every pointer is borrowed and required.
  struct Deps {
    Store* store = nullptr;
    const ProblemRegistry* problems = nullptr;
    CompileService* compiler = nullptr;
    WorkerRegistry* workers = nullptr;
    JobTable* jobs = nullptr;
    Sessions* sessions = nullptr;
    Scheduler* scheduler = nullptr;
    JobFinisher* finisher = nullptr;
    // The secret behind each submission's hidden cases.
    const HoldoutKeys* holdout_keys = nullptr;
  };

  JobService(const Options& options, const Deps& deps);

  // Validates and starts a job; returns it in its first stage. A refusal
  // is recorded as a turn of the request's session. ResourceExhausted when
  // Options::max_unfinished_jobs are unfinished (and no room was given).
  absl::StatusOr<v1::Job> Submit(v1::JobKind kind,
                                 const v1::KernelRequest& request,
                                 const JobSubmitOptions& options = {});

  // Submit and wait: `done` is called once, with the finished job, or with
  // the reason the request was refused. Returns the job id ("" if refused)
  // so that a caller who goes away can Cancel it.
  using DoneFn = std::function<void(absl::StatusOr<v1::Job>)>;
  std::string RunTool(v1::JobKind kind, const v1::KernelRequest& request,
                      DoneFn done);

  // The status a tool call returns for a finished job: OK unless the job's
  // result carries an error (the request could not be carried out).
  static absl::Status ToolStatus(const v1::Job& job);

  absl::StatusOr<v1::Job> GetJob(const std::string& id);
  absl::StatusOr<std::string> GetSource(const std::string& digest);
  absl::StatusOr<v1::ListJobsResponse> ListJobs(const v1::ListJobsRequest& r);
  // Cancels an unfinished job (a finished one is returned unchanged).
  absl::StatusOr<v1::Job> Cancel(const std::string& id);
  // See JobTable::Watch.
  absl::StatusOr<int64_t> Watch(const std::string& id,
                                JobTable::Watcher watcher);
  void Unwatch(const std::string& id, int64_t token);

  // FailedPrecondition when no worker is connected.
  absl::StatusOr<v1::GetGpuSpecsResponse> GetGpuSpecs(
      const std::string& session_id);
  // The public view of every problem, or of one suite's (NotFound, naming
  // the known suites, for an unknown one), with every suite and the
  // problem files kbd refused at start.
  absl::StatusOr<v1::ListProblemsResponse> ListProblems(
      const v1::ListProblemsRequest& request) const;

  // Room for `n` jobs (a sweep's), given to Submit through
  // JobSubmitOptions: ResourceExhausted, saying what to do, when `n` more
  // would take the unfinished jobs past Options::max_unfinished_jobs.
  absl::StatusOr<JobTable::Reservation> Reserve(int n);
  // The largest source Submit takes, in bytes.
  size_t max_source_bytes() const { return options_.max_source_bytes; }

  // Restarts jobs that were unfinished when kbd stopped.
  void Recover();

 private:
  struct Prepared;  // A validated request; see job_service_internal.h.
  // `job_id` keys the draw of a submission's hidden cases.
  absl::StatusOr<Prepared> Prepare(v1::JobKind kind,
                                   const v1::KernelRequest& request,
                                   const std::string& job_id) const;
  // The shape sets a job checks (and, for a submission, its hidden cases).
  absl::Status ChooseCheckSets(const std::string& job_id, Prepared* p) const;
  absl::StatusOr<v1::Job> Start(v1::JobKind kind,
                                const v1::KernelRequest& request,
                                const JobSubmitOptions& options);

  absl::Status CheckGpuAvailable() const;
  void StartCompile(const std::string& job_id, const Prepared& prepared);
  void OnCompiled(const std::string& job_id, const Prepared& prepared,
                  absl::StatusOr<CompileService::Result> compiled);
  v1::RunnerJob MakeRunnerJob(const std::string& job_id,
                              const Prepared& prepared,
                              const CompileService::Result& compiled) const;
  // Queues `job` for a worker, unless it was cancelled meanwhile; a
  // golden-kernel problem's job first gets its problem's kernels.
  void Enqueue(const std::string& job_id, const Prepared& prepared,
               v1::RunnerJob job);

  Options options_;
  Store* store_;
  const ProblemRegistry* problems_;
  CompileService* compiler_;
  WorkerRegistry* workers_;
  JobTable* jobs_;
  Sessions* sessions_;
  Scheduler* scheduler_;
  JobFinisher* finisher_;
  const HoldoutKeys* holdout_keys_;
  // The golden and baseline cubins of golden-kernel problems, per arch.
  std::unique_ptr<ProblemKernels> problem_kernels_;
  const absl::Time started_ = absl::Now();
};

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_JOB_SERVICE_H_
