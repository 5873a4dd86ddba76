// The made-up results of kb_fake_runner (testing/fake_runner_main.cc), the
// stand-in runner of the CI tests: its GPU's facts, and the result of a job
// that passes, with timing, counters and hot lines shaped as a real
// runner's are. Nothing here runs a kernel; every figure is fixed, or set by
// a marker in the job's source (FAKE_KERNEL_US=, FAKE_GPU_BASES).
//
// Thread safety: free functions on values.
#ifndef KBENCH_TESTING_FAKE_RESULTS_H_
#define KBENCH_TESTING_FAKE_RESULTS_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "kbench/v1/report.pb.h"
#include "kbench/v1/worker.pb.h"

namespace kbench {

// "kbench fake GPU (tests only)", sm_90, 132 SMs, with measured ceilings
// of 4000 GB/s, 60 TFLOP/s and a 5 us launch floor.
v1::GpuSpec FakeSpec();

// Ten samples around `median_us`: mean 1.01x, min 0.97x, max 1.05x, std
// 2% of it; what a steady kernel's timing looks like.
v1::Stats FakeStats(double median_us);

// The integer after `marker` in `source` (e.g. "FAKE_SLOW_MS=300"), or -1.
int64_t MarkerValue(const std::string& source, absl::string_view marker);

// The result of `job` when it passes (see fake_runner_main.cc's comment).
v1::JobResult PassResult(const v1::RunnerJob& job);

}  // namespace kbench

#endif  // KBENCH_TESTING_FAKE_RESULTS_H_
