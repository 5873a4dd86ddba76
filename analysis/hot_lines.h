// HotLines: turns PC samples (already mapped to source lines) into the
// ranked SourceLine list of a profile: each line's share of all samples,
// its text from the kernel's source, and its top warp states.
//
// Thread safety: pure functions.
#ifndef KBENCH_ANALYSIS_HOT_LINES_H_
#define KBENCH_ANALYSIS_HOT_LINES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kbench/v1/report.pb.h"

namespace kbench {

// Samples of one warp state at one PC.
struct PcSample {
  std::string entry;  // Kernel function.
  std::string file;   // From -lineinfo; empty when the PC has no line.
  int line = 0;
  std::string state;  // CUPTI's stall reason name.
  int64_t samples = 0;
};

// "smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued" ->
// "long_scoreboard".
std::string WarpStateName(const std::string& cupti_name);

// The `max_lines` lines with the most samples, hottest first. `source` and
// `filename` give the text of lines in the kernel's own file. Samples
// without a line are counted in the total only; "_not_issued" states (a
// subset of the samples of the same state) are skipped. Sets *total.
std::vector<v1::SourceLine> RankSourceLines(const std::vector<PcSample>& pcs,
                                            const std::string& source,
                                            const std::string& filename,
                                            int max_lines, int64_t* total);

}  // namespace kbench

#endif  // KBENCH_ANALYSIS_HOT_LINES_H_
