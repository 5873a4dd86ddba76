// Fuzz target: the source policy (SourcePolicy::CheckSource), the check
// every kernel source passes before NVRTC sees it, with the CUDA include
// roots kbd uses. Input: the kernel source.
//
// Besides "no crash, leak or UB", a source the policy accepts must not read
// a host file in the eyes of a small independent model of the C
// preprocessor (translation phases 2-4: line splices, comments, string,
// character and raw string literals, `#` and its digraph `%:`): no
// include-like directive (include, include_next, import, embed) whose
// operand is a macro, an absolute path, a path with "..", a backslash, or
// any #embed. The model is deliberately simpler than a compiler; where it
// errs it must err towards seeing no directive, so a report here is a hole
// in the policy (or, rarely, a model bug to fix in this file).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "compiler/source_policy.h"
#include "tests/fuzz/fuzz_util.h"

namespace kbench {
namespace {

// As GCC lexes identifiers: letters, digits, '_', '$' and (UTF-8) extended
// characters.
bool IsIdent(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' ||
         c == '$' || static_cast<unsigned char>(c) >= 0x80;
}

// Phases 2 and 3: splices joined, comments replaced by a space, literals
// kept as written.
std::string Preprocess(absl::string_view src) {
  std::string text;
  for (size_t i = 0; i < src.size(); ++i) {
    if (src[i] == '\\') {
      size_t j = i + 1;
      // GCC also splices a backslash followed by spaces, then a newline.
      while (j < src.size() && (src[j] == ' ' || src[j] == '\t')) ++j;
      if (j < src.size() && src[j] == '\r') ++j;
      if (j < src.size() && src[j] == '\n') {
        i = j;
        continue;
      }
    }
    text.push_back(src[i]);
  }
  std::string out;
  const size_t n = text.size();
  absl::string_view prefix;  // The last identifier, ending at prefix_end.
  size_t prefix_end = std::string::npos;
  for (size_t i = 0; i < n;) {
    const char c = text[i];
    const char next = i + 1 < n ? text[i + 1] : '\0';
    if (c == '/' && next == '/') {
      out.push_back(' ');
      while (i < n && text[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && next == '*') {
      out.push_back(' ');
      const size_t end = text.find("*/", i + 2);
      // An unterminated comment runs to the end: the model sees nothing.
      i = end == std::string::npos ? n : end + 2;
      continue;
    }
    if (IsIdent(c) && !absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      // An identifier, whole: it is a literal's prefix only if a quote
      // follows it directly.
      const size_t start = i;
      while (i < n && IsIdent(text[i])) out.push_back(text[i++]);
      prefix = absl::string_view(text.data() + start, i - start);
      prefix_end = i;
      continue;
    }
    if (absl::ascii_isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && absl::ascii_isdigit(static_cast<unsigned char>(next)))) {
      // A pp-number: a quote continues it only before a digit or nondigit
      // (1'000); e+, e-, p+, p- too.
      out.push_back(text[i++]);
      while (i < n) {
        const char d = text[i];
        const bool sign = (d == '+' || d == '-') &&
                          (text[i - 1] == 'e' || text[i - 1] == 'E' ||
                           text[i - 1] == 'p' || text[i - 1] == 'P');
        if (IsIdent(d) || d == '.' || sign) {
          out.push_back(text[i++]);
        } else if (d == '\'' && i + 1 < n && IsIdent(text[i + 1])) {
          out.append(text, i, 2);
          i += 2;
        } else {
          break;
        }
      }
      continue;
    }
    if (c == '"' || c == '\'') {
      if (prefix_end != i) prefix = "";
      if (c == '"' && (prefix == "R" || prefix == "LR" || prefix == "uR" ||
                       prefix == "UR" || prefix == "u8R")) {
        const size_t open = text.find('(', i + 1);
        if (open != std::string::npos && open - i - 1 <= 16) {
          const std::string close =
              ")" + text.substr(i + 1, open - i - 1) + "\"";
          const size_t end = text.find(close, open + 1);
          const size_t stop = end == std::string::npos ? n : end + close.size();
          // The literal's lines are not directives; keep its newlines only.
          for (size_t k = i; k < stop; ++k) {
            out.push_back(text[k] == '\n' ? '\n' : 'x');
          }
          i = stop;
          continue;
        }
      }
      out.push_back(c);
      ++i;
      while (i < n && text[i] != '\n') {
        // Kept as written: a quoted header name is such a literal.
        if (text[i] == '\\' && i + 1 < n && text[i + 1] != '\n') {
          out.append(text, i, 2);
          i += 2;
          continue;
        }
        out.push_back(text[i]);
        if (text[i++] == c) break;
      }
      continue;
    }
    out.push_back(c);
    ++i;
  }
  return out;
}

// Why the model thinks `line` (a logical line) reads a host file, or "".
std::string HostRead(absl::string_view line) {
  line = absl::StripLeadingAsciiWhitespace(line);
  if (!absl::ConsumePrefix(&line, "#") && !absl::ConsumePrefix(&line, "%:")) {
    return "";
  }
  line = absl::StripLeadingAsciiWhitespace(line);
  // A byte >= 0x80 may continue the name as an extended character:
  // "include\xc3\xa9" is no include directive, so the model sees none.
  absl::string_view directive;
  for (absl::string_view d : {"include_next", "include", "import", "embed"}) {
    if (absl::StartsWith(line, d) &&
        (line.size() == d.size() ||
         (!IsIdent(line[d.size()]) &&
          static_cast<unsigned char>(line[d.size()]) < 0x80))) {
      directive = d;
      break;
    }
  }
  if (directive.empty()) return "";
  if (directive == "embed") return "#embed";
  absl::string_view operand =
      absl::StripLeadingAsciiWhitespace(line.substr(directive.size()));
  if (operand.empty()) return "";  // A directive without operand reads none.
  const char open = operand[0];
  // A macro name: letters, '_', '$' and (UTF-8) extended characters.
  const unsigned char first = static_cast<unsigned char>(open);
  if (absl::ascii_isalpha(first) || open == '_' || open == '$' ||
      first >= 0x80) {
    return "a macro-expanded operand";
  }
  // Anything else (a number, punctuation) cannot expand to a header name.
  if (open != '<' && open != '"') return "";
  const size_t end = operand.find(open == '<' ? '>' : '"', 1);
  if (end == absl::string_view::npos) return "";  // Ill-formed: no read.
  const absl::string_view path = operand.substr(1, end - 1);
  if (!path.empty() && path[0] == '/') return "an absolute path";
  if (absl::StrContains(path, "..")) return "a path with ..";
  if (absl::StrContains(path, "\\")) return "a backslash";
  return "";
}

const SourcePolicy& Policy() {
  static const SourcePolicy* const kPolicy = [] {
    SourcePolicy::Options options;
    options.include_roots =
        absl::StrSplit(KBENCH_CUDA_INCLUDE_DIR, ';', absl::SkipWhitespace());
    options.in_memory_headers = {"kbench_fuzz_header.h"};
    return new SourcePolicy(std::move(options));
  }();
  return *kPolicy;
}

}  // namespace
}  // namespace kbench

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kbench::fuzz::QuietLogs();
  (void)kbench::Policy();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view source = kbench::fuzz::AsText(data, size);
  const absl::Status status = kbench::Policy().CheckSource(source, "kernel.cu");
  if (!status.ok()) {
    if (status.code() != absl::StatusCode::kInvalidArgument) {
      kbench::fuzz::Fail(
          "CheckSource failed with a code other than "
          "InvalidArgument",
          status.ToString());
    }
    if (!absl::StartsWith(status.message(), "kernel.cu") &&
        !absl::StartsWith(status.message(), "source is ")) {
      kbench::fuzz::Fail("a refusal does not name the file", status.message());
    }
    return 0;
  }
  for (absl::string_view line :
       absl::StrSplit(kbench::Preprocess(source), '\n')) {
    const std::string why = kbench::HostRead(line);
    if (!why.empty()) {
      kbench::fuzz::Fail(
          "the source policy accepted a directive that reads a host file (" +
              why + ")",
          line);
    }
  }
  // The options check, on the first line split at spaces.
  const std::vector<std::string> options =
      absl::StrSplit(source.substr(0, source.find('\n')), ' ');
  (void)kbench::SourcePolicy::CheckOptions(options);
  return 0;
}
