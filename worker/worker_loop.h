// WorkerLoop: the body of kbworker. It keeps one warm kbrunner child on its
// GPU, long-polls kbd for a lease, runs the leased job in the runner under a
// watchdog (the job's budget), heartbeats while it runs, and completes the
// lease with the result. Sanitize jobs run instead in one-shot runners under
// compute-sanitizer (worker/sanitizer_runner.h). A runner that crashes, hangs
// or reports a sticky CUDA error is replaced before the next lease; the worker
// itself never dies from a candidate. A worker parked in a gang lease (a
// multi-GPU job whose leader is another worker of this host) only
// heartbeats until the lease ends; the gang's leader (rank 0) runs the job
// in a runner of its own that sees every member's GPU. Every call to kbd
// carries the worker token as `authorization: Bearer <token>` metadata; kbd
// refusing it (or the worker's GPU facts) ends Run() with the reason, since
// retrying cannot help.
//
// Ownership: owns the gRPC channel and the runner process.
// Thread safety: Run() on one thread; Stop() from any thread.
#ifndef KBENCH_WORKER_WORKER_LOOP_H_
#define KBENCH_WORKER_WORKER_LOOP_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "kbench/v1/worker.grpc.pb.h"
#include "worker/runner_process.h"

namespace kbench {

class WorkerLoop {
 public:
  struct Options {
    // kbd's gRPC address.
    std::string server = "127.0.0.1:50051";
    // The worker token (contract/worker_auth.h), sent with every call.
    std::string token;
    // GPU index on this host (among CUDA_VISIBLE_DEVICES if that is set).
    int gpu = 0;
    // kbrunner executable.
    std::string runner;
    // Extra arguments for the runner (e.g. --log-level).
    std::vector<std::string> runner_args;
    // Stable id reported to kbd; default "<hostname>:gpu<N>".
    std::string worker_id;
    // Reported to kbd as WorkerInfo.host_id: the same for every worker of
    // this host (worker/host_id.h). Empty: none reported.
    std::string host_id;
    // Long-poll length of one LeaseJob call.
    absl::Duration lease_wait = absl::Seconds(20);
    // Period of heartbeats while a job runs.
    absl::Duration heartbeat = absl::Seconds(1);
    // Added to a job's budget before the watchdog kills the runner.
    absl::Duration budget_grace = absl::Seconds(1);
    // Failed runner starts in a row before Run() gives up.
    int max_runner_failures = 3;
    // compute-sanitizer for sanitize jobs; empty: $CUDA_HOME/bin,
    // /usr/local/cuda/bin, then $PATH (see worker/sanitizer_runner.h).
    std::string compute_sanitizer;
    // When set, each leased RunnerJob is also written to
    // <save_jobs_dir>/<job id>.pb, to replay with `kbrunner --oneshot`
    // (e.g. under ncu).
    std::string save_jobs_dir;
  };

  explicit WorkerLoop(const Options& options);

  // Serves until Stop(). FailedPrecondition when the runner cannot start
  // (no GPU, no driver) max_runner_failures times in a row.
  absl::Status Run();
  void Stop() { stopping_ = true; }

 private:
  // A runner child that sees `devices` (CUDA_VISIBLE_DEVICES).
  RunnerProcess::Options RunnerOptions(const std::string& devices) const;
  absl::Status EnsureRunner();
  // The CUDA_VISIBLE_DEVICES of the runner of `lease`: this worker's GPU;
  // for a gang this worker leads, every member's GPU in rank order (the
  // runner's rank r is its device r). Internal when kbd's gang does not
  // have this worker as rank 0 or names a GPU twice.
  absl::StatusOr<std::string> RunnerDevices(
      const v1::LeaseJobResponse& lease) const;
  // Runs a leased job: in the worker's runner, or for a gang's job in a
  // runner of its own on every member's GPU, stopped after the job.
  v1::JobResult Execute(const v1::LeaseJobResponse& lease);
  // A parked member of a gang lease: runs nothing and heartbeats the lease
  // until kbd says it ended (or stops answering for twice its TTL).
  void Park(const v1::LeaseJobResponse& lease);
  // A sanitize job, under the same heartbeats as Execute.
  // `devices` as RunnerDevices gives them.
  v1::JobResult Sanitize(
      const v1::RunnerJob& job, const std::string& devices,
      const std::function<void(const std::string&)>& progress,
      const std::atomic<bool>* cancel);
  void Complete(const std::string& lease_id, const v1::JobResult& result);
  // A context for one call to kbd: the token, and a deadline `timeout` away.
  std::unique_ptr<grpc::ClientContext> Context(absl::Duration timeout) const;

  Options options_;
  std::unique_ptr<v1::WorkerService::Stub> stub_;
  std::unique_ptr<RunnerProcess> runner_;
  v1::WorkerInfo info_;
  std::atomic<bool> stopping_{false};
};

}  // namespace kbench

#endif  // KBENCH_WORKER_WORKER_LOOP_H_
