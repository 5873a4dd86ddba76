// The server-side judgement of a profile: what the runner's counters and
// the GPU's measured ceilings say about a kernel, as figures an LLM agent
// can act on.
//
//  - AnalyzeProfile fills ProfileReport.headroom (the time floor of the
//    problem at this shape and how far the kernel is from it),
//    ProfileReport.roofline (the plan's point against the measured roofs,
//    and whether it is latency-, memory- or compute-bound) and
//    ProfileReport.hints (concrete next steps, fired by the rules of
//    analysis/profile_hints.h).
//  - ComputeDeltas compares a profile with the session's previous one,
//    figure by figure, and flags regressions beyond the noise.
//
// Figures that the profile lists as missing (ProfileReport.missing) or as
// suspect (CounterProfile.suspect) are never used as facts: no hint fires on
// them and no delta compares them.
//
// Thread safety: pure functions on values; safe to call concurrently.
#ifndef KBENCH_ANALYSIS_PROFILE_ANALYSIS_H_
#define KBENCH_ANALYSIS_PROFILE_ANALYSIS_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "analysis/counter_figures.h"
#include "kbench/v1/report.pb.h"

namespace kbench {

// Headroom is "near the limit" at or below this measured / floor ratio.
inline constexpr double kNearLimitRatio = 1.5;
// The roofline calls a plan latency-bound below this speed of light (the
// larger of SOL compute and SOL memory, time-weighted over the launches), %.
inline constexpr double kLatencyBoundSolPct = 60.0;

// Fills p->headroom, p->roofline and p->hints (replacing what was there)
// from the profile's figures and `gpu`'s measured ceilings
// (measured_copy_gbps, measured_fp32_tflops, measured_launch_us). Headroom
// is left unset when no floor is known; the roofline when no launch has
// counters.
void AnalyzeProfile(const v1::GpuSpec& gpu, v1::ProfileReport* p);

// Sets current->deltas to the plan-level figures present (and not suspect)
// in both profiles, each with its direction and whether it regressed beyond
// the noise (3% relative for times, bytes and rates, 1 point for
// percentages, any change for counts such as registers), and sets
// current->previous_job_id.
void ComputeDeltas(const v1::ProfileReport& previous,
                   const std::string& previous_job_id,
                   v1::ProfileReport* current);

}  // namespace kbench

#endif  // KBENCH_ANALYSIS_PROFILE_ANALYSIS_H_
