// Parsing of compute-sanitizer's text output (memcheck, racecheck,
// initcheck) into SanitizeFindings, with each location mapped back to the
// submitted source's line text. Pure functions; no process or GPU.
//
// The format (every line prefixed "========= "; a record starts at one
// space of indentation, its details are indented further):
//   ========= Invalid __global__ write of size 4 bytes
//   =========     at gather_linear+0x1f0 in /tmp/kernel.cu:17
//   =========     by thread (31,0,0) in block (3,0,0)
//   =========     Address 0x7f0c0000380 is out of bounds
//   =========     and is 4 bytes after the nearest allocation at ...
//   ========= Error: Race reported between Write access at k+0x110 in a.cu:8
//   =========     and Read access at k+0xd0 in a.cu:9 [4 hazards]
//   ========= ERROR SUMMARY: 2 errors
// Older releases write locations as "at 0x1f0 in /tmp/kernel.cu:17:kernel";
// both are accepted. Host and device backtrace frames are skipped.
//
// Thread safety: stateless functions.
#ifndef KBENCH_WORKER_SANITIZER_OUTPUT_H_
#define KBENCH_WORKER_SANITIZER_OUTPUT_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "kbench/v1/report.pb.h"

namespace kbench {

struct SanitizerLocation {
  std::string kernel;  // "" when not given.
  std::string file;    // "" without -lineinfo.
  int line = 0;
};

// Parses "gather+0x1f0 in /tmp/kernel.cu:17", "0x1f0 in kernel.cu:17:gather"
// or "gather+0x1f0". False when `text` is none of these.
bool ParseSanitizerLocation(absl::string_view text, SanitizerLocation* loc);

struct SanitizerParse {
  // Distinct findings in order of first appearance; repeats of one kind at
  // one line are merged into `count`.
  std::vector<v1::SanitizeFinding> findings;
  std::string summary;      // "ERROR SUMMARY: ..." / "RACECHECK SUMMARY: ...".
  int summary_errors = -1;  // The number in the summary; -1 if none.
};

// Parses the output of one `compute-sanitizer --tool <tool>` run.
// `filename` and `source` are the job's: a finding whose file's base name
// is `filename`'s gets the line's text from `source`.
SanitizerParse ParseSanitizerOutput(absl::string_view tool,
                                    absl::string_view output,
                                    absl::string_view filename,
                                    absl::string_view source);

// Line `line` (1-based) of `source` without surrounding blanks; "" when out
// of range.
std::string SourceLineText(absl::string_view source, int line);

}  // namespace kbench

#endif  // KBENCH_WORKER_SANITIZER_OUTPUT_H_
