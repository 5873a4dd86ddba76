// The rule table behind ProfileReport.hints: each rule compares one figure
// of a launch (a CounterProfile field, a static launch fact, or a derived
// figure) or of the plan with a threshold and, when it fires, says what to
// do. The rules are data (HintRules()); add a row to add a rule.
//
// Figures a rule can name:
//  - every double field of CounterProfile by its name
//    ("global_load_sectors_per_request", "l2_hit_rate_pct", ...), and raw
//    CUPTI metric names from CounterProfile.metrics ("dram__bytes.sum");
//  - "stall_<reason>_pct": the share of that warp-stall reason in
//    LaunchProfile.top_stalls (e.g. "stall_long_scoreboard_pct");
//  - static facts, known without counters: "local_bytes", "registers",
//    "theoretical_occupancy_pct", "waves", "blocks";
//  - derived: "last_wave_fill_pct" (how full the last wave is, for 1 to 3
//    waves), "sm_fill_pct" (SMs given a block, % of the GPU's);
//  - plan figures (scope kPlan): "headroom_ratio".
// A rule never fires on a figure that is missing, suspect or unknown, nor
// when its guard figure is.
//
// Message templates may use {entry}, {value}, {threshold}, {blocks},
// {sm_count}, {sms_busy}, {waves}, {blocks_per_wave}, {limiter}.
//
// Thread safety: the table is immutable; the functions are pure.
#ifndef KBENCH_ANALYSIS_PROFILE_HINTS_H_
#define KBENCH_ANALYSIS_PROFILE_HINTS_H_

#include <string>
#include <vector>

#include "absl/types/span.h"
#include "kbench/v1/report.pb.h"

namespace kbench {

enum class HintOp { kGreater, kGreaterEq, kLess, kLessEq };

struct HintRule {
  // Where the figure lives: one launch (evaluated per launch) or the plan.
  enum Scope { kLaunch, kPlan };
  const char* id;  // e.g. "uncoalesced_loads".
  Scope scope;
  const char* figure;  // See the list above.
  HintOp op;
  double threshold;
  const char* unit;  // Of figure and threshold, e.g. "sectors/request".
  // The rule applies only when this figure also passes its test; nullptr
  // for none.
  const char* guard_figure;
  HintOp guard_op;
  double guard_threshold;
  const char* message;  // Template; see above.
};

// Every rule, in the order their hints are listed.
absl::Span<const HintRule> HintRules();

// "> 8 sectors/request", "< 25%".
std::string ThresholdText(HintOp op, double threshold, const std::string& unit);

// The hints the rules fire on `p`, whose headroom is already set (or not).
// Launches taking under 5% of a multi-launch plan's time get no hints.
std::vector<v1::ProfileHint> EvaluateHints(const v1::GpuSpec& gpu,
                                           const v1::ProfileReport& p);

// What limits the blocks per SM of `launch` on `gpu`, e.g. "registers (64
// per thread allow 4 blocks/SM)"; "" when the GPU's limits are unknown.
std::string OccupancyLimiter(const v1::GpuSpec& gpu,
                             const v1::LaunchProfile& launch);

}  // namespace kbench

#endif  // KBENCH_ANALYSIS_PROFILE_HINTS_H_
