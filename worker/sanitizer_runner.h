// SanitizerRunner: carries out a sanitize job (JOB_KIND_SANITIZE) on the
// worker. Instead of the warm runner it starts, once per tool (memcheck,
// racecheck, initcheck), a one-shot child
//   compute-sanitizer --tool T --print-limit 20 --log-file LOG
//       kbrunner --oneshot JOB.pb RESULT.pb
// on a copy of the job cut down to one shape and one trial, each under its
// own watchdog; it parses each tool's log (worker/sanitizer_output.h) into
// the result's SanitizeReport. Without compute-sanitizer on the worker the
// result is VERDICT_ERROR with a FAILED_PRECONDITION error that says so.
//
// Ownership: owns the temporary directory and child processes of one Run.
// Thread safety: one Run at a time per instance; `cancel` may be set from
// any thread.
#ifndef KBENCH_WORKER_SANITIZER_RUNNER_H_
#define KBENCH_WORKER_SANITIZER_RUNNER_H_

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kbench/v1/report.pb.h"
#include "kbench/v1/worker.pb.h"

namespace kbench {

class SanitizerRunner {
 public:
  struct Options {
    // compute-sanitizer executable. Empty: $CUDA_HOME/bin,
    // /usr/local/cuda/bin, then $PATH. When set, only this path is used.
    std::string sanitizer_path;
    // kbrunner executable (run with --oneshot).
    std::string runner_path;
    // Extra arguments for kbrunner (e.g. --log-level).
    std::vector<std::string> runner_args;
    // Environment set on top of the worker's (e.g. CUDA_VISIBLE_DEVICES).
    std::map<std::string, std::string> env;
    // Named in errors ("... not installed on worker X").
    std::string worker_id;
    // Each tool's run gets the job's budget, but at least this (the
    // sanitizer and a fresh CUDA context take seconds) ...
    absl::Duration min_tool_budget = absl::Seconds(60);
    // ... and at most this.
    absl::Duration max_tool_budget = absl::Seconds(300);
    // Directory for the job and log files; default $TMPDIR, else /tmp.
    std::string temp_dir;
    // Bytes of each tool's log that are parsed; the rest is ignored.
    size_t max_log_bytes = 4 << 20;
    // Bytes of the runner's stdout (device printf) kept.
    size_t max_output_bytes = 16 * 1024;
  };

  explicit SanitizerRunner(Options options) : options_(std::move(options)) {}

  // The compute-sanitizer to use: `explicit_path` when set (NotFound if it
  // is not an executable file), else the first executable found in
  // $CUDA_HOME/bin, /usr/local/cuda/bin and $PATH (NotFound, listing where
  // it looked).
  static absl::StatusOr<std::string> FindSanitizer(
      const std::string& explicit_path);

  // The tools `job` asks for, in the order memcheck, racecheck, initcheck;
  // all three when it names none. InvalidArgument for an unknown name.
  static absl::StatusOr<std::vector<std::string>> ToolsOf(
      const v1::RunnerJob& job);

  // `job` cut down to what a sanitizer run needs: its first check set's
  // first shape, one trial, kind SANITIZE.
  static v1::RunnerJob SmallJob(const v1::RunnerJob& job);

  // Runs the job; every outcome is a JobResult (see the file comment).
  // `progress` gets "memcheck (1/3)" etc.; `cancel` stops the run
  // (VERDICT_CANCELLED).
  v1::JobResult Run(const v1::RunnerJob& job,
                    const std::function<void(const std::string&)>& progress,
                    const std::atomic<bool>* cancel);

 private:
  Options options_;
};

}  // namespace kbench

#endif  // KBENCH_WORKER_SANITIZER_RUNNER_H_
