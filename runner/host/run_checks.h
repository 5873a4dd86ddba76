// Host-side checks of the runner's hardening, testable without a GPU:
// keyed input checksums, the comparison of a trial's two runs, the per-problem
// sanity check of the tolerance against trivial outputs, the physical time
// floor and the clock-throttling note.
//
// Thread safety: pure functions; safe to call concurrently.
#ifndef KBENCH_RUNNER_HOST_RUN_CHECKS_H_
#define KBENCH_RUNNER_HOST_RUN_CHECKS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "kbench/v1/problem.pb.h"
#include "kbench/v1/report.pb.h"
#include "runner/host/output_compare.h"

namespace kbench {

// The keyed checksum of `n` bytes: the sum modulo 2^64 of ChecksumWord
// (compare_math.h) over their 32-bit words. The host's version of what the
// device computes (DeviceKeyedChecksum), for tests and small inputs.
uint64_t KeyedChecksum(const void* data, size_t n, uint64_t key);

// "" when equal; else "modified input 'x': its contents changed during the
// kernel's run (checksum A before, B after). Inputs are read-only: ...".
std::string DescribeInputChange(const std::string& tensor, uint64_t before,
                                uint64_t after);

// Compares two runs of the same trial (same inputs). Exact equality is
// expected from a deterministic kernel; differences within the problem's
// tolerance of each other are allowed (atomics reorder fp32 sums). Returns
// "" when they agree, else "the two runs of the same inputs differed ..."
// with the figures (elements, max abs difference; NaN in one run only).
std::string CompareRuns(const double* first, const double* second, int64_t n,
                        const v1::Tolerance& tolerance,
                        const OutputLayout& layout, bool show_index);
// The same message from figures accumulated elsewhere (AddRunDiff over `n`
// elements, on the host or the device).
std::string DescribeRunDiff(const RunDiff& diff, int64_t n,
                            const OutputLayout& layout, bool show_index);

// Sets speedup_events, speedup_gpu and speedup_graph from `t`'s medians
// (0 where a side was not measured), and `speedup` and `speedup_basis`: GPU
// time (CUPTI) when both sides have it, else events; and
// speedup_vs_expert on that basis (0 without an expert baseline).
void SetSpeedups(v1::TimingReport* t);

// The verdict message of a kernel whose output was wrong after timing:
// "the output of the timed runs was wrong (WHICH) on WHERE: N of M outputs
// outside tolerance (...). The kernel must compute the full result on
// every call". `which` says which run was judged, `where` the shape (and,
// for a problem that spans GPUs, the rank).
std::string DescribeTimedOutputWrong(absl::string_view which,
                                     absl::string_view where,
                                     const v1::TrialResult& check);

// Appends one reason a GPU-time basis is missing to t->gpu_time_note.
void AddGpuTimeNote(v1::TimingReport* t, absl::string_view why);

// The sanity check of a problem's comparison on one shape: an all-zero
// output and a constant output (the golden mean) must both fail against
// `golden`. FailedPrecondition "the problem's check is too weak on shape
// ..." when either would pass; `where` names the shape. Outputs of fewer
// than kMinSanityElements elements are not checked: one element equals its
// own mean, and a few random values fall within atol of zero or of their
// mean often enough to make the check a coin toss (a drawn hidden case may
// be B = K = 1); the problem's tolerance is judged on the larger shapes.
inline constexpr int64_t kMinSanityElements = 16;
absl::Status SanityCheckTolerance(const double* golden, int64_t n,
                                  const v1::Tolerance& tolerance,
                                  const std::string& where);
// The same verdict from the figures of an all-zero output (`zero`) and of
// the constant `mean` output (`mean_errors`) against an `n`-element golden
// result, accumulated elsewhere (on the device for large outputs).
absl::Status SanityVerdict(const OutputErrors& zero,
                           const OutputErrors& mean_errors, double mean,
                           int64_t n, const v1::Tolerance& tolerance,
                           const std::string& where);

// The physical floor, in us: max(min_bytes / peak bandwidth, flops / peak
// rate). Peaks are the measured ceilings where present, else the datasheet;
// 0 when neither is known. With `half_precision` (a problem with bf16 or
// fp16 tensors) the rate is the datasheet's dense tensor-core peak, since
// such a kernel may use the tensor cores (no compute floor when unknown:
// a floor too high would refuse a fast kernel as impossible).
double PhysicalFloorUs(double flops, double min_bytes, const v1::GpuSpec& spec,
                       bool half_precision = false);

// "" when `median_us` is plausible; else "impossible: faster than the
// physical floor ..." when median_us < 0.9 * floor_us.
std::string CheckTimeFloor(double median_us, double floor_us);

// "" when the clock held; else "clock dropped from X to Y MHz during timing:
// results may be pessimistic" (after < 0.9 x before), or "SM clock Y MHz is
// far below the maximum of M MHz ..." (below 0.7 x max). 0 means unknown.
std::string ThrottleNote(double before_mhz, double after_mhz, int max_mhz);

}  // namespace kbench

#endif  // KBENCH_RUNNER_HOST_RUN_CHECKS_H_
