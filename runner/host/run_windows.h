// RunWindow and the spans of runs that ran on several ranks at once: the
// time of one run of a job that spans GPUs is from the first rank's start
// to the last rank's end (docs/multi-gpu.md), on the one time base CUPTI
// puts every GPU's kernel records on.
// Thread safety: pure functions.
#ifndef KBENCH_RUNNER_HOST_RUN_WINDOWS_H_
#define KBENCH_RUNNER_HOST_RUN_WINDOWS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace kbench {

// Where one run ran on one GPU: from the GPU taking its first launch to its
// last kernel's end, in CUPTI's nanoseconds.
struct RunWindow {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
};

// `by_rank[r]` holds rank r's window of every run of `order` (the workload
// of each run, in the order they ran; every rank ran the same runs). Returns
// one vector per workload (`workloads` of them) of the runs' spans across
// the ranks, in us, each workload's first `skip_runs` runs dropped. All
// empty, with *why set, when a rank's windows do not match `order` or a
// workload ran no more than its warm-up runs.
std::vector<std::vector<double>> JoinRankWindowsUs(
    const std::vector<std::vector<RunWindow>>& by_rank,
    const std::vector<int>& order, int workloads, int skip_runs,
    std::string* why);

}  // namespace kbench

#endif  // KBENCH_RUNNER_HOST_RUN_WINDOWS_H_
