// LineLoads: global-load requests and sectors per source line of a job's
// candidate (SassLineCounters), collected in a child kbrunner with a CUDA
// context of its own. Measured on the H200: CUPTI's SASS metrics cannot be
// configured in a context where the range profiler has run
// (cuptiSassMetricsSetConfig: CUPTI_ERROR_OUT_OF_MEMORY), and once they have
// run, PC sampling attributes no sample to user code; a process of its own
// keeps the runner's context as the counters and PC sampling need it.
//
// Thread safety: none (runner thread); the child is waited for.
#ifndef KBENCH_WORKER_RUNNER_LINE_LOADS_H_
#define KBENCH_WORKER_RUNNER_LINE_LOADS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kbench/v1/report.pb.h"
#include "kbench/v1/worker.pb.h"
#include "worker/runner/device_context.h"

namespace kbench {

// In the child (`kbrunner --line-loads JOB.pb OUT.pb`): loads the job's
// cubin, binds its plan at the timing shape to fresh inputs, runs it once
// with SASS metrics on and fills out->hot_lines with one entry per source
// line that loads from global memory (file, line, global_load_*).
absl::Status CollectLineLoads(DeviceContext* ctx, const v1::RunnerJob& job,
                              v1::ProfileReport* out);

// In the runner: writes `job` (with `cubin` for `arch`) to a temporary
// file, runs `kbrunner --device DEVICE --line-loads` on it (this same
// binary), waits at most `timeout` and returns the child's report.
// Unavailable with the child's reason when it fails.
absl::StatusOr<v1::ProfileReport> LineLoadsInChild(const v1::RunnerJob& job,
                                                   const std::string& cubin,
                                                   const std::string& arch,
                                                   int device,
                                                   absl::Duration timeout);

}  // namespace kbench

#endif  // KBENCH_WORKER_RUNNER_LINE_LOADS_H_
