// CounterProfiler: hardware counters per kernel launch through the CUPTI
// Range Profiler (cupti_range_profiler.h) and the Profiler Host API
// (cupti_profiler_host.h), in the call order of
// ../shared/reference/cupti-metrics.md.
//
// Ranges are automatic (one per kernel). Replay is by the user (us) by
// default: the whole enqueue function runs once per pass, and `before_pass`
// (the L2 flush) runs first in each pass, so every pass starts with cold,
// clean caches as under Nsight Compute's default `--cache-control all`.
// The flush runs inside the profiled region, after the pass has started,
// because starting a pass writes to device memory itself: flushed before
// the start, the L2 would hold those dirty lines, and their write-back
// would land in the first kernel's DRAM writes (measured on the H200: 2.4
// MB of DRAM writes for a kernel that only reads 8 MB, against 38 KB with
// the flush inside). The flush's own kernels are ranges too, and are
// dropped from the result. CUPTI's kernel replay (Options::replay = kKernel)
// saves and restores memory between passes itself but cannot flush caches
// between them, so DRAM bytes and hit rates of small kernels then describe
// a warm L2.
//
// The config image of a metric list (and its pass count) is built once and
// reused. A metric the GPU or CUPTI refuses is dropped (and reported) rather
// than failing the whole list.
//
// Ownership: borrows the DeviceContext; owns the CUPTI host objects.
// Thread safety: none (runner thread). Only one CounterProfiler per process.
#ifndef KBENCH_RUNNER_PROFILE_COUNTER_PROFILER_H_
#define KBENCH_RUNNER_PROFILE_COUNTER_PROFILER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runner/device/device_context.h"

struct CUpti_Profiler_Host_Object;
struct CUpti_RangeProfiler_Object;

namespace kbench {

class CounterProfiler {
 public:
  struct Options {
    enum class Replay {
      kUser,    // We replay the enqueue per pass, flushing before each.
      kKernel,  // CUPTI replays each kernel (no flush between passes).
    };
    // How passes are replayed (see the file comment).
    Replay replay = Replay::kUser;
    // Most kernels one `before_pass` plus `enqueue` may launch; more is an
    // error.
    int max_ranges = 64;
  };

  // One kernel launch: its name (as CUPTI reports it) and metric values.
  struct Range {
    std::string name;
    std::map<std::string, double> values;
  };
  struct Collection {
    std::vector<Range> ranges;  // In launch order.
    int passes = 0;
    // Metrics of the request that the GPU or CUPTI refused.
    std::set<std::string> dropped;
    double wall_ms = 0;
  };

  // Unavailable, with why, when counters cannot be read here (no
  // privileges: the driver's RmProfilingAdminOnly; vGPU; another profiler
  // such as ncu attached).
  static absl::StatusOr<std::unique_ptr<CounterProfiler>> Create(
      DeviceContext* ctx, const Options& options);
  ~CounterProfiler();

  CounterProfiler(const CounterProfiler&) = delete;
  CounterProfiler& operator=(const CounterProfiler&) = delete;

  // Collects `metrics` for every kernel `enqueue` launches on the context's
  // stream (no sync needed). `before_pass` (user replay only; may be empty)
  // is enqueued first in each pass and launches exactly
  // `before_pass_kernels` kernels, whose ranges are dropped. Both must be
  // repeatable: each pass must launch the same kernels. `kernels`, when
  // known (> 0), is how many kernels one run of `enqueue` launches: the
  // counter data image is sized for that many ranges, since its set-up
  // takes time in proportion (H200, 52 metrics: 225 ms for 192 ranges,
  // 13 ms for 10). Should `enqueue` launch more, the collection runs again
  // with room for Options::max_ranges; ResourceExhausted if more than that.
  absl::StatusOr<Collection> Collect(
      const std::vector<std::string>& metrics,
      const std::function<absl::Status()>& before_pass, int before_pass_kernels,
      const std::function<absl::Status()>& enqueue, int kernels = 0);

 private:
  struct Config {
    CUpti_Profiler_Host_Object* host = nullptr;  // Owned.
    std::vector<std::string> metrics;            // Accepted ones.
    std::set<std::string> dropped;
    std::vector<uint8_t> image;
    int passes = 0;
  };

  // Where a Collect's time goes (milliseconds), for the log.
  struct PhaseTimes {
    double enable_ms = 0, image_ms = 0, config_ms = 0;
    double start_ms = 0, launch_ms = 0, sync_ms = 0, stop_ms = 0;
    double decode_ms = 0;
  };

  CounterProfiler(DeviceContext* ctx, const Options& options)
      : ctx_(ctx), options_(options) {}
  absl::Status Init();
  absl::StatusOr<Config*> ConfigFor(const std::vector<std::string>& metrics);
  // A host object holding `metrics`; error if CUPTI refuses any of them.
  absl::StatusOr<CUpti_Profiler_Host_Object*> NewHost(
      const std::vector<std::string>& metrics);
  // One collection with room for `max_ranges` ranges per pass; `skipped`:
  // before_pass's kernels. When the pass filled the room (ranges past it
  // may have been lost), sets *full and returns no ranges.
  absl::StatusOr<Collection> CollectOnce(
      const std::vector<std::string>& metrics,
      const std::function<absl::Status()>& before_pass, int skipped,
      const std::function<absl::Status()>& enqueue, int max_ranges, bool* full);
  // Passes on the enabled `object` for `config` (SetUp, RunPasses,
  // decode), read into *out (its ranges, passes); sets *full as
  // CollectOnce does.
  absl::Status Session(CUpti_RangeProfiler_Object* object, const Config& config,
                       const std::function<absl::Status()>& before_pass,
                       int skipped,
                       const std::function<absl::Status()>& enqueue,
                       int max_ranges, Collection* out, bool* full,
                       PhaseTimes* times);
  // Initializes `data`, the counter data image, for `max_ranges` ranges,
  // and sets `config` on the enabled `object`.
  absl::Status SetUp(CUpti_RangeProfiler_Object* object, const Config& config,
                     int max_ranges, std::vector<uint8_t>* data,
                     PhaseTimes* times);
  // Runs passes (each: before_pass, then enqueue) until CUPTI has all it
  // needs; adds them to out->passes.
  absl::Status RunPasses(CUpti_RangeProfiler_Object* object,
                         const Config& config,
                         const std::function<absl::Status()>& before_pass,
                         const std::function<absl::Status()>& enqueue,
                         Collection* out, PhaseTimes* times);
  // Evaluates the `total` decoded ranges, the first `skipped` dropped, into
  // out->ranges.
  absl::Status ReadRanges(const Config& config,
                          const std::vector<uint8_t>& data, size_t total,
                          size_t skipped, Collection* out);

  DeviceContext* ctx_;
  Options options_;
  std::string chip_;
  std::vector<uint8_t> availability_;
  std::map<std::string, std::unique_ptr<Config>> configs_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_PROFILE_COUNTER_PROFILER_H_
