// Unified diff of two texts (e.g. two iterations of a kernel source), as
// `diff -u` prints it, without timestamps. Written by hand: Myers'
// O((N+M)·D) algorithm in its linear-space form (middle snake), after
// trimming common prefix/suffix and setting aside lines that occur in only
// one of the texts.
//
// Thread safety: pure function; safe to call concurrently.
#ifndef KBENCH_BASE_TEXT_DIFF_H_
#define KBENCH_BASE_TEXT_DIFF_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace kbench {

struct TextDiffOptions {
  // Unchanged lines shown around each change; negative counts as 0. Changes
  // with at most 2 * context_lines unchanged lines between them share a hunk.
  int context_lines = 3;
  // Name of the old text in the "--- " header line.
  std::string from_label = "a";
  // Name of the new text in the "+++ " header line.
  std::string to_label = "b";
  // Upper bound on the size of the result. A longer diff is cut at a line
  // boundary and ends with "... (diff truncated)\n"; the result, marker
  // included, stays within the bound (unless the bound is smaller than the
  // marker, which then comes alone). 0 means no bound.
  size_t max_output_bytes = 64 * 1024;
};

// Line counts of a diff: '+' lines and '-' lines. Counted over the whole
// diff, also when the printed text is truncated.
struct TextDiffStats {
  int added = 0;
  int removed = 0;
};

// A unified diff of `from` and `to`, split into lines on '\n' (a missing
// final newline is noted as "\ No newline at end of file"; "x" and "x\n" as
// last lines differ). Empty string when the texts are equal. Hunk headers
// "@@ -l,s +l,s @@" follow GNU diff: 1-based line numbers, ",1" left out, and
// an empty range given as the line before it ("@@ -0,0 +1,2 @@").
//
// The diff is minimal (fewest '+' and '-' lines) unless the texts are very
// different: once the search has taken a fixed budget of steps (5·10^7,
// about 0.3 s optimized; reached e.g. by two unrelated 10000-line texts
// drawn from a few dozen distinct lines), the part of the texts still to be
// compared is reported as removed and added wholesale, which is still a
// correct diff. Its hunks are not shifted to match GNU diff's choice among
// equally short diffs, so the text may differ from `diff -u` while the
// counts agree.
//
// `stats`, when not null, receives the line counts.
std::string UnifiedDiff(absl::string_view from, absl::string_view to,
                        const TextDiffOptions& options = {},
                        TextDiffStats* stats = nullptr);

}  // namespace kbench

#endif  // KBENCH_BASE_TEXT_DIFF_H_
