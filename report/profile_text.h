// Text of a profile's hardware counters and of kbd's analysis of them
// (headroom, roofline, hints, deltas against the previous profile), for the
// job report (report/report_text.h) and the agent tools' text
// (agent/agent_report.h). Every number carries its unit; a figure the
// profile lists as missing reads "n/a", and a suspect one is followed by
// "(suspect: why)" so that it is not read as a fact.
//
// Thread safety: pure functions on values; safe to call concurrently.
#ifndef KBENCH_REPORT_PROFILE_TEXT_H_
#define KBENCH_REPORT_PROFILE_TEXT_H_

#include <string>

#include "absl/strings/string_view.h"
#include "kbench/v1/report.pb.h"

namespace kbench {

// The counters of one launch of `p` (nothing when it has none, and stall
// shares alone when only those were sampled), each line prefixed by
// `indent`: GPU time, SOL, DRAM traffic, cache hit rates, pipes, occupancy
// and warps, coalescing, bank conflicts, top stalls.
void AppendLaunchCounters(const v1::ProfileReport& p,
                          const v1::LaunchProfile& launch,
                          absl::string_view indent, std::string* out);

// The plan-level lines, each prefixed by `indent`: the counter collection
// ("counters: preset full, 12 passes, 340 ms" or why none were read), the
// missing figures, the reference's kernels, headroom, roofline, hints and
// the deltas against the previous profile.
void AppendProfileAnalysis(const v1::ProfileReport& p, absl::string_view indent,
                           std::string* out);

// For a problem that spans GPUs, one line (prefixed by `indent`) saying
// whose kernels the profile counted: "ranks: rank 0 of 2 ..."; nothing for
// a one-GPU problem.
void AppendProfileRank(const v1::ProfileReport& p, absl::string_view indent,
                       std::string* out);

// One delta's values: "12.3 us -> 10.1 us", "45.0% -> 61.2%".
std::string FormatDeltaValues(const v1::MetricDelta& delta);

}  // namespace kbench

#endif  // KBENCH_REPORT_PROFILE_TEXT_H_
