// KernelActivity: GPU start/end timestamps of kernels, from CUPTI's
// activity API (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL): the same span Nsight
// Compute reports as gpu__time_duration, without the event and launch
// overhead that events around a launch include.
//
//   KernelActivity activity;
//   if (activity.Start().ok()) { ...launch...; sync; records = activity.Stop();
//   }
//
// Only one KernelActivity may record at a time (CUPTI's activity buffers
// are process-wide). Start fails (and the caller goes on without kernel
// times) when CUPTI is unavailable or taken, e.g. under Nsight Compute.
//
// Ownership: owns nothing but its records. Thread safety: Start and Stop
// from one thread; CUPTI's buffer callbacks are synchronised internally.
#ifndef KBENCH_RUNNER_PROFILE_KERNEL_ACTIVITY_H_
#define KBENCH_RUNNER_PROFILE_KERNEL_ACTIVITY_H_

#include <cuda_runtime_api.h>
#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runner/host/run_windows.h"

namespace kbench {

class KernelActivity {
 public:
  struct Record {
    std::string name;  // The kernel's (unmangled for extern "C") name.
    uint64_t start_ns = 0;
    uint64_t end_ns = 0;
    // When the GPU's front end took the launch (CUPTI's `submitted`
    // latency timestamp), or 0 when CUPTI gave none. On the H200 it is
    // 0.51-0.54 us before start_ns for every kernel, an empty one included;
    // Nsight Compute's gpu__time_duration counts that time (2026-12-04 lab
    // note).
    uint64_t submitted_ns = 0;
    // Where it ran: the CUDA device ordinal and CUPTI's id of its stream
    // (StreamId), which tell the ranks of a job that spans GPUs apart.
    uint32_t device_id = 0;
    uint32_t stream_id = 0;
    double duration_us() const { return (end_ns - start_ns) * 1e-3; }
  };

  KernelActivity() = default;
  ~KernelActivity();
  KernelActivity(const KernelActivity&) = delete;
  KernelActivity& operator=(const KernelActivity&) = delete;

  // Starts recording every kernel launched from now on.
  absl::Status Start();
  // Stops, flushes and returns the records in start order. Call after the
  // recorded work has completed (a stream synchronize).
  absl::StatusOr<std::vector<Record>> Stop();
  // Records CUPTI reported dropped between Start and the last Stop.
  size_t dropped() const { return dropped_; }
  // After a failed Start: whether it failed because a CUDA tool (Nsight
  // Compute, say) holds CUPTI.
  bool tool_attached() const { return tool_attached_; }
  // Whether a CUDA tool holds CUPTI in this process: its injection
  // variable is set, or CUPTI refuses a second subscriber (ncu
  // --target-processes all left the variable unset in the runner, H200
  // and H100, 2026-12-05). Registers this class's CUPTI callbacks once.
  static bool ToolAttached();
  // CUPTI's id of `stream`, as Record.stream_id gives it.
  static absl::StatusOr<uint32_t> StreamId(cudaStream_t stream);

 private:
  static CUptiResult Registered();
  bool started_ = false;
  bool tool_attached_ = false;
  size_t dropped_ = 0;
};

// Why RunSpansUs found no runs in `records` (for a report's note): how many
// records there were and how many `keep` took, against the runs expected.
std::string NoRunsReason(const std::vector<KernelActivity::Record>& records,
                         const std::function<bool(const std::string&)>& keep,
                         int launches_per_run, int skip_runs);

// A submitted stamp further than this before its kernel's start is taken
// for a launch that waited behind other work, and the start is used.
constexpr uint64_t kMaxFrontEndNs = 2000;

// Per-run GPU times from `records`: keeps the kernels `keep` accepts, in
// start order, cuts them into runs of `launches_per_run` and takes each
// run's span, from the GPU taking its first launch (submitted_ns, where it
// is at most kMaxFrontEndNs before the kernel's start; else the start) to
// its last kernel's end (the gaps between a run's kernels count: the run
// takes them). The first `skip_runs` runs (warm-up) are dropped. Empty when
// the kept records do not split evenly into runs. Without `from_submitted`
// a run starts at its first kernel's start: for kernels replayed from a
// CUDA graph, whose launches the GPU takes ahead of time, so that a
// `submitted` stamp says nothing about the run.
std::vector<double> RunSpansUs(
    const std::vector<KernelActivity::Record>& records,
    const std::function<bool(const std::string&)>& keep, int launches_per_run,
    int skip_runs, bool from_submitted = true);

// Per-run GPU times of workloads that ran one after another on one stream,
// told apart by position rather than by name: CUPTI before 13.4 may report
// a kernel of a module loaded after another was unloaded under the old
// kernel's name ("stale kernel names after module reloads", fixed in CUPTI
// 13.4 Update 1), and the runner loads and unloads modules in every job.
// `order` is the workload index of every run, in the order they ran;
// workload w launches kernels_per_run[w] kernels a run. The records that
// are not the harness's (IsHarnessKernel: its module is never unloaded, so
// its names are never stale) are cut into runs in that order, each run's
// span taken as RunSpansUs does, and each workload's first `skip_runs`
// runs dropped. Returns one vector per workload; all empty, with *why
// set, when the records do not add up to the runs of `order`.
std::vector<std::vector<double>> ScheduledSpansUs(
    const std::vector<KernelActivity::Record>& records,
    const std::vector<int>& order, const std::vector<int>& kernels_per_run,
    int skip_runs, bool from_submitted, std::string* why);

// The window (RunWindow: from the GPU taking its first launch, as
// RunSpansUs, to its last kernel's end) of every run of `order`, cut as
// ScheduledSpansUs cuts them, warm-up runs included; empty, with *why set, when
// the records do not add up to the runs of `order`. For a job that spans GPUs,
// `records` are one rank's (one stream's) and the caller joins the ranks'
// windows.
std::vector<RunWindow> ScheduledWindows(
    const std::vector<KernelActivity::Record>& records,
    const std::vector<int>& order, const std::vector<int>& kernels_per_run,
    bool from_submitted, std::string* why);

// One part of a workload's runs, for seeing where a run's time goes: the
// front end (submitted stamp to the first kernel's start, 0 where there is
// no usable stamp), each kernel, and the gap before each kernel after the
// first. `us` holds the part's time in every run. (CUPTI's `completed`
// stamp, tried as a tail after the last kernel, was never later than its
// end on the H100, 2026-12-06.)
struct RunPart {
  std::string name;  // "front end", "gap", or the kernel's name.
  std::vector<double> us;
};

// The parts of workload `workload`'s runs in a schedule cut as
// ScheduledSpansUs cuts it (the first `skip_runs` runs dropped): front end,
// kernel 1, gap, kernel 2, ... Kernel names are the first counted run's
// (CUPTI may give stale names; see above). Empty when the records do not
// add up to the runs of `order` or the workload ran only warm-up runs.
std::vector<RunPart> ScheduledPartsUs(
    const std::vector<KernelActivity::Record>& records,
    const std::vector<int>& order, const std::vector<int>& kernels_per_run,
    int skip_runs, int workload);

// Whether `name` is one of kbench's own kernels that run between timed
// workloads (the L2 flush, the stream blocker, the clock probe): they
// belong to no workload.
bool IsHarnessKernel(const std::string& name);

}  // namespace kbench

#endif  // KBENCH_RUNNER_PROFILE_KERNEL_ACTIVITY_H_
