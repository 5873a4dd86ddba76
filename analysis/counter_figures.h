// CounterFigures: which hardware metrics each profile preset reads, and the
// figures derived from their values by Nsight Compute's formulas (see
// ../shared/reference/cupti-metrics.md): DRAM traffic and rates, hit rates,
// pipe utilization, occupancy, warps per scheduler, coalescing, shared-memory
// bank conflicts, speed of light, counted FLOPs and the top warp stalls.
// Values outside their physical range are labelled in
// CounterProfile.suspect, not passed off as facts.
//
// Pure functions of the metric values: no GPU needed (the runner collects
// the values with CounterProfiler). Thread safety: all functions are
// thread safe.
#ifndef KBENCH_ANALYSIS_COUNTER_FIGURES_H_
#define KBENCH_ANALYSIS_COUNTER_FIGURES_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kbench/v1/report.pb.h"

namespace kbench {

enum class ProfilePreset {
  kFast,  // Time, DRAM, L2, occupancy, coalescing: few replay passes.
  kFull,  // Everything, with the warp-stall breakdown.
};

// "" and "full" -> kFull, "fast" -> kFast; InvalidArgument naming the
// allowed values otherwise.
absl::StatusOr<ProfilePreset> ParseProfilePreset(absl::string_view name);
const char* ProfilePresetName(ProfilePreset preset);

// The CUPTI metric names a preset collects, in a fixed order.
const std::vector<std::string>& PresetMetrics(ProfilePreset preset);

// The warp-stall reasons whose per-warp-active percentages the full preset
// reads (smsp__warp_issue_stalled_<reason>_per_warp_active.pct).
const std::vector<std::string>& StallReasons();

// Fills launch->counters (every value in `values` is kept in
// counters.metrics) and launch->top_stalls (the five largest reasons as
// shares of all stalls, "selected" excluded) from metric values. Figures
// whose metrics are absent stay 0. `spec` bounds the rates (suspect when
// DRAM GB/s exceeds 1.1 x the theoretical bandwidth).
void DeriveCounterFigures(const std::map<std::string, double>& values,
                          const v1::GpuSpec& spec, v1::LaunchProfile* launch);

// The figures a collection cannot give: those whose metrics are not in
// `preset`, and those whose metrics are in `dropped` (metrics the GPU or
// CUPTI refused), each with a reason. `dropped_reason` explains the
// latter, e.g. "not available on this GPU".
std::vector<v1::MissingFigure> MissingFigures(
    ProfilePreset preset, const std::set<std::string>& dropped,
    const std::string& dropped_reason);

// A launch's figure by its CounterProfile field name (e.g.
// "l2_hit_rate_pct"), or by one of the derived names of
// analysis/profile_hints.h ("stall_long_scoreboard_pct", ...); nullopt when
// the launch has no counters, the figure is unknown, or `p` lists it as
// missing.
std::optional<double> CounterFigure(const v1::ProfileReport& p,
                                    const v1::LaunchProfile& launch,
                                    absl::string_view figure);

// Why `launch`'s counters call `figure` suspect (the text after the figure's
// name in CounterProfile.suspect), or nullopt when they do not.
std::optional<std::string> SuspectReason(const v1::LaunchProfile& launch,
                                         absl::string_view figure);

// True when `p` lists `figure` in ProfileReport.missing.
bool IsMissingFigure(const v1::ProfileReport& p, absl::string_view figure);

}  // namespace kbench

#endif  // KBENCH_ANALYSIS_COUNTER_FIGURES_H_
