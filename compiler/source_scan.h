// ScanSource: translation phases 1-3 of a kernel source, as far as the
// source policy needs them: backslash-newlines spliced, comments replaced by
// one space, string, character and raw string literals and pp-numbers (with
// their digit separators) lexed as [lex] of C++17 says, which is how NVRTC
// is run (--std=c++17).
//
// Where compilers could lex a source differently (an extended character,
// '$' or '\' in code; a quote after a number followed by one of those; a
// malformed raw string delimiter; a backslash followed by spaces at a line's
// end), the scan stops and says why: the policy refuses such a source
// instead of guessing where a literal or comment starts, since a wrong guess
// could hide a directive from it.
//
// Thread safety: a pure function.
#ifndef KBENCH_COMPILER_SOURCE_SCAN_H_
#define KBENCH_COMPILER_SOURCE_SCAN_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace kbench {

struct ScannedSource {
  // The spliced text with comments replaced by one space; literals kept.
  std::string clean;
  // `clean` with the insides of string and character literals blanked.
  std::string code;
  // line[i]: the 1-based source line of clean[i].
  std::vector<int> line;
  // Non-empty when the source cannot be lexed without guessing: why (a
  // phrase for a message); the rest of the source is then not scanned.
  std::string refused;
  // The source line `refused` is about.
  int refused_line = 0;
};

ScannedSource ScanSource(absl::string_view src);

}  // namespace kbench

#endif  // KBENCH_COMPILER_SOURCE_SCAN_H_
