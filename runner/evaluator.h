// Evaluator: carries out one RunnerJob in the runner process and turns
// every outcome into a JobResult with a verdict:
//   passed      correct on every trial (and, for submit/profile, timed);
//   failed      a wrong result, with the error figures (also: the two runs
//               of a trial differed, the timed runs' output was wrong, a
//               hidden case failed);
//   crashed     a sticky CUDA error (illegal address, trap, ...): the
//               context is unusable and the caller must replace the runner;
//   rejected    the kernel breaks the contract (missing entry, parameters
//               that do not match, a launch the GPU refuses, a write
//               outside a tensor, a modified input, a time below the
//               physical floor);
//   compile_error  only when the runner had to compile for its own arch;
//   error       a fault of the harness itself (or a problem whose check
//               is too weak: a zero or constant output would pass).
// Every result carries a ReproManifest.
// timed_out is decided by the worker's watchdog, outside this process.
//
// Ownership: borrows the DeviceContext; owns the TimingRunner and compiler.
// Thread safety: none (runner thread).
#ifndef KBENCH_RUNNER_EVALUATOR_H_
#define KBENCH_RUNNER_EVALUATOR_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/nvrtc_compiler.h"
#include "kbench/v1/report.pb.h"
#include "kbench/v1/worker.pb.h"
#include "runner/check/correctness_checker.h"
#include "runner/device/device_context.h"
#include "runner/timing/timing_runner.h"

namespace kbench {

class Evaluator {
 public:
  static absl::StatusOr<std::unique_ptr<Evaluator>> Create(DeviceContext* ctx);

  // Runs `job`. Sets *unhealthy when the CUDA context must not be used
  // again.
  v1::JobResult Run(const v1::RunnerJob& job, const ProgressFn& progress,
                    bool* unhealthy);

 private:
  explicit Evaluator(DeviceContext* ctx) : ctx_(ctx) {}
  // The cubin for this GPU: the job's when its arch matches, else compiled
  // here. Sets result->compile when compiling.
  absl::StatusOr<std::string> CubinFor(const v1::RunnerJob& job,
                                       v1::JobResult* result);
  absl::Status RunChecked(const v1::RunnerJob& job, const ProgressFn& progress,
                          v1::JobResult* result);

  DeviceContext* ctx_;
  NvrtcCompiler compiler_;
  std::unique_ptr<TimingRunner> timing_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_EVALUATOR_H_
