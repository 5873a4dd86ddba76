// PlanCounters: the hardware counters of a profile job. It reads the
// preset's metrics (analysis/counter_figures.h) for every kernel of the
// candidate's bound plan and of the reference's eager pipeline, the same
// way (CounterProfiler, cold L2 before each replay pass), and fills the
// ProfileReport: counters and top stalls per launch, the reference's
// launches with their time shares, the preset, passes, wall time and the
// figures that could not be read; with the full preset it also samples the
// candidate's PCs (PcSampler) for its hottest source lines, unless the
// worker's environment sets KBENCH_NO_PC_SAMPLING. When counters
// are unavailable (no
// privileges, another profiler attached) it says why in
// counters_unavailable and leaves the timing and static facts as they are.
//
// Ownership: borrows the DeviceContext and the L2 flusher; owns the
// CounterProfiler, created on first use and kept (its config images are
// reused), and the reference's counters per problem, shape and preset.
// Thread safety: none (runner thread).
#ifndef KBENCH_RUNNER_PROFILE_PLAN_COUNTERS_H_
#define KBENCH_RUNNER_PROFILE_PLAN_COUNTERS_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "analysis/counter_figures.h"
#include "kbench/v1/report.pb.h"
#include "kbench/v1/worker.pb.h"
#include "runner/device/candidate_module.h"
#include "runner/device/device_context.h"
#include "runner/device/l2_flusher.h"
#include "runner/profile/counter_profiler.h"
#include "runner/profile/line_loads.h"
#include "runner/profile/pc_sampler.h"
#include "runner/reference/reference_op.h"

namespace kbench {

class PlanCounters {
 public:
  PlanCounters(DeviceContext* ctx, L2Flusher* flusher,
               const CounterProfiler::Options& options)
      : ctx_(ctx),
        flusher_(flusher),
        options_(options),
        sampler_(ctx, PcSampler::Options()) {}

  // The candidate, for mapping PC samples to its source lines.
  struct Candidate {
    BoundPlan* bound = nullptr;
    const std::string* cubin = nullptr;  // The image `bound` runs.
    const std::string* source = nullptr;
    std::string filename;
    // Loads a fresh copy of the candidate, bound to the same tensors, for
    // PC sampling (see PcSampler::Loader). Empty: no hot lines.
    PcSampler::Loader reload;
    // The job, for the child that counts global loads per line
    // (line_loads.h). Null: hot lines without them, for the reason
    // `no_job_reason` (reported among the missing figures).
    const v1::RunnerJob* job = nullptr;
    std::string no_job_reason = "no job to run the SASS metrics on";
    // Identifies the reference's work (problem, shape, preset): its
    // counters are read once per key and reused, since the reference does
    // not change between profiles. Empty: read every time.
    std::string reference_key;
  };

  // Adds the counters to `profile`, whose launches() already hold the
  // plan's launches in order (a "(workspace zero-fill)" entry first when
  // the plan has workspaces), and, for the full preset, the hottest source
  // lines from PC sampling. Returns an error only when the GPU failed (a
  // sticky CUDA error); counter trouble is reported in `profile`.
  absl::Status Add(ProfilePreset preset, const Candidate& candidate,
                   ReferenceOp* reference, v1::ProfileReport* profile);

  // Returns once no helper child is starting up (see line_loads.h): call
  // before any timing or counter measurement.
  void WaitQuiet();

 private:
  // Global loads per hot line (SASS metrics, in a child process, after
  // every counter of the profile is read), into profile's hot lines;
  // trouble is reported in profile.missing. KBENCH_LINE_LOADS=0 in the
  // worker's environment turns them off.
  absl::Status AddLineLoads(const Candidate& candidate,
                            v1::ProfileReport* profile);
  // The profiler, created on first use; the creation error is kept.
  absl::StatusOr<CounterProfiler*> Profiler();

  DeviceContext* ctx_;
  L2Flusher* flusher_;
  CounterProfiler::Options options_;
  PcSampler sampler_;
  // reference_key -> the reference's launches with counters, and passes.
  std::map<std::string, std::pair<std::vector<v1::LaunchProfile>, int>>
      reference_cache_;
  std::unique_ptr<CounterProfiler> profiler_;
  // The line-loads child, made at the first full profile.
  std::unique_ptr<LineLoadsChild> line_loads_;
  absl::Status create_status_;
  bool tried_ = false;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_PROFILE_PLAN_COUNTERS_H_
