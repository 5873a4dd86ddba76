#include "compiler/nvrtc_log.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace kbench {
namespace {

// Splits a log into lines without their '\n' or '\r'.
std::vector<absl::string_view> Lines(absl::string_view text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  for (absl::string_view& line : lines) absl::ConsumeSuffix(&line, "\r");
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

// One "file(LINE): severity[ #code]: message" header, or a line-less
// "nvrtc: error: ..." / "ptxas error   : ..." line (file empty, line 0).
struct DiagnosticHeader {
  std::string file;
  int line = 0;
  std::string severity;  // "error", "warning" or "remark".
  std::string message;
};

// Consumes a severity word ("catastrophic error" and "fatal" count as
// "error") from the front of `rest`.
std::optional<std::string> ConsumeSeverity(absl::string_view* rest) {
  static constexpr std::pair<const char*, const char*> kSeverities[] = {
      {"catastrophic error", "error"},
      {"fatal error", "error"},
      {"error", "error"},
      {"fatal", "error"},
      {"warning", "warning"},
      {"remark", "remark"},
  };
  for (const auto& [word, severity] : kSeverities) {
    if (absl::ConsumePrefix(rest, word)) return std::string(severity);
  }
  return std::nullopt;
}

// After the severity: an optional " #177-D" code, optional spaces, then ':'.
// Returns the message after the colon, or nullopt when the shape differs.
std::optional<absl::string_view> MessageAfterSeverity(absl::string_view rest) {
  if (absl::ConsumePrefix(&rest, " #")) {
    size_t colon = rest.find(':');
    if (colon == absl::string_view::npos) return std::nullopt;
    absl::string_view code = rest.substr(0, colon);
    if (code.empty() || code.find(' ') != absl::string_view::npos) {
      return std::nullopt;
    }
    rest.remove_prefix(colon);
  }
  rest = absl::StripLeadingAsciiWhitespace(rest);
  if (!absl::ConsumePrefix(&rest, ":")) return std::nullopt;
  return absl::StripAsciiWhitespace(rest);
}

std::optional<DiagnosticHeader> ParseHeader(absl::string_view line) {
  // Line-less tool messages.
  for (absl::string_view tool : {"nvrtc: ", "ptxas "}) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, tool)) continue;
    std::optional<std::string> severity = ConsumeSeverity(&rest);
    if (!severity) return std::nullopt;
    std::optional<absl::string_view> message = MessageAfterSeverity(rest);
    if (!message) return std::nullopt;
    return DiagnosticHeader{"", 0, *severity, std::string(*message)};
  }
  // "file(LINE): ..."; the file name may itself hold "(" or "): ".
  for (size_t close = line.find("): "); close != absl::string_view::npos;
       close = line.find("): ", close + 1)) {
    size_t open = line.rfind('(', close);
    if (open == absl::string_view::npos || open == 0) continue;
    int line_number = 0;
    if (!absl::SimpleAtoi(line.substr(open + 1, close - open - 1),
                          &line_number) ||
        line_number < 0) {
      continue;
    }
    absl::string_view rest = line.substr(close + 3);
    std::optional<std::string> severity = ConsumeSeverity(&rest);
    if (!severity) continue;
    std::optional<absl::string_view> message = MessageAfterSeverity(rest);
    if (!message) continue;
    return DiagnosticHeader{std::string(line.substr(0, open)), line_number,
                            *severity, std::string(*message)};
  }
  return std::nullopt;
}

// "... at line 4 of kernel.cu" in a "detected during instantiation" line.
std::optional<int> InstantiationLine(absl::string_view line,
                                     absl::string_view filename) {
  size_t at = line.rfind(" at line ");
  if (at == absl::string_view::npos) return std::nullopt;
  absl::string_view rest = line.substr(at + 9);
  size_t of = rest.find(" of ");
  if (of == absl::string_view::npos || rest.substr(of + 4) != filename) {
    return std::nullopt;
  }
  int number = 0;
  if (!absl::SimpleAtoi(rest.substr(0, of), &number)) return std::nullopt;
  return number;
}

bool IsPtxasInfoLine(absl::string_view line) {
  if (absl::StartsWith(line, "ptxas info")) return true;
  // "ptxas         .     0 bytes stack frame, ...".
  absl::string_view rest = line;
  if (!absl::ConsumePrefix(&rest, "ptxas ")) return false;
  return absl::StartsWith(absl::StripLeadingAsciiWhitespace(rest), ".");
}

// Reads "N unit" items of a comma-separated ptxas line ("Used 28 registers,
// used 1 barriers, 4096 bytes smem, 380 bytes cmem[0]") into `kernel`, in
// any order; unknown items are skipped.
void ParseResourceItems(absl::string_view items, v1::KernelResources* kernel) {
  for (absl::string_view item : absl::StrSplit(items, ',')) {
    std::vector<absl::string_view> words =
        absl::StrSplit(item, ' ', absl::SkipWhitespace());
    if (!words.empty() && absl::AsciiStrToLower(words[0]) == "used") {
      words.erase(words.begin());
    }
    if (words.size() < 2) continue;
    int64_t value = 0;
    if (!absl::SimpleAtoi(words[0], &value)) continue;
    std::string unit = absl::StrJoin(words.begin() + 1, words.end(), " ");
    if (unit == "registers") {
      kernel->set_registers(static_cast<int32_t>(value));
    } else if (unit == "barriers") {
      kernel->set_barriers(static_cast<int32_t>(value));
    } else if (unit == "bytes smem") {
      kernel->set_static_smem_bytes(value);
    } else if (unit == "bytes cmem[0]") {
      kernel->set_const_bytes(value);
    } else if (unit == "bytes stack frame") {
      kernel->set_stack_frame_bytes(value);
    } else if (unit == "bytes spill stores") {
      kernel->set_spill_store_bytes(value);
    } else if (unit == "bytes spill loads") {
      kernel->set_spill_load_bytes(value);
    }
  }
}

// The text between the first pair of single quotes, else the trimmed text.
absl::string_view QuotedOrRest(absl::string_view text) {
  size_t open = text.find('\'');
  if (open == absl::string_view::npos) return absl::StripAsciiWhitespace(text);
  size_t close = text.find('\'', open + 1);
  if (close == absl::string_view::npos) return text.substr(open + 1);
  return text.substr(open + 1, close - open - 1);
}

}  // namespace

std::vector<v1::Diagnostic> ParseNvrtcDiagnostics(absl::string_view log,
                                                  absl::string_view filename) {
  std::vector<v1::Diagnostic> diagnostics;
  // The last diagnostic reported in another file (a header), which a
  // "detected during instantiation ... at line N of <filename>" line may
  // place in the kernel source.
  int elsewhere = -1;
  for (absl::string_view line : Lines(log)) {
    std::optional<DiagnosticHeader> header = ParseHeader(line);
    if (!header) {
      if (elsewhere >= 0 && diagnostics[elsewhere].line() == 0) {
        if (std::optional<int> at = InstantiationLine(line, filename)) {
          diagnostics[elsewhere].set_line(*at);
        }
      }
      continue;
    }
    v1::Diagnostic& diagnostic = diagnostics.emplace_back();
    elsewhere = -1;
    diagnostic.set_severity(header->severity);
    if (filename.empty() || header->file.empty() || header->file == filename) {
      diagnostic.set_line(header->line);
      diagnostic.set_message(header->message);
    } else {
      diagnostic.set_message(absl::StrCat(header->file, "(", header->line,
                                          "): ", header->message));
      elsewhere = static_cast<int>(diagnostics.size()) - 1;
    }
  }
  return diagnostics;
}

std::vector<v1::KernelResources> ParsePtxasInfo(absl::string_view log) {
  std::vector<v1::KernelResources> kernels;
  // The entry being compiled, and the one that the next "ptxas ." line
  // describes (set by "Function properties for" its own name only).
  int current = -1;
  int properties_of = -1;
  for (absl::string_view line : Lines(log)) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, "ptxas")) continue;
    rest = absl::StripLeadingAsciiWhitespace(rest);
    if (absl::ConsumePrefix(&rest, ".")) {
      if (properties_of >= 0) ParseResourceItems(rest, &kernels[properties_of]);
      properties_of = -1;
      continue;
    }
    if (!absl::ConsumePrefix(&rest, "info")) continue;
    rest = absl::StripLeadingAsciiWhitespace(rest);
    if (!absl::ConsumePrefix(&rest, ":")) continue;
    rest = absl::StripAsciiWhitespace(rest);
    if (absl::ConsumePrefix(&rest, "Compiling entry function")) {
      kernels.emplace_back().set_name(std::string(QuotedOrRest(rest)));
      current = static_cast<int>(kernels.size()) - 1;
      properties_of = -1;
    } else if (absl::StartsWith(rest, "Compiling")) {
      current = -1;  // A non-entry function (relocatable device code).
      properties_of = -1;
    } else if (absl::ConsumePrefix(&rest, "Function properties for")) {
      absl::string_view name = QuotedOrRest(rest);
      properties_of =
          (current >= 0 && kernels[current].name() == name) ? current : -1;
    } else if (absl::StartsWith(rest, "Used ")) {
      if (current >= 0) ParseResourceItems(rest, &kernels[current]);
    }
  }
  return kernels;
}

std::string TrimLog(absl::string_view log, int max_errors, size_t max_bytes) {
  if (max_errors < 0) max_errors = 0;
  std::vector<absl::string_view> kept;
  std::vector<int> errors_through;  // Errors in kept[0..i].
  int errors_total = 0;
  bool cut = false;
  for (absl::string_view line : Lines(log)) {
    if (IsPtxasInfoLine(line)) continue;
    std::optional<DiagnosticHeader> header = ParseHeader(line);
    if (header && header->severity == "error") {
      ++errors_total;
      if (errors_total > max_errors) cut = true;
    }
    if (cut) continue;
    bool blank = absl::StripAsciiWhitespace(line).empty();
    // No leading or doubled blank lines (left where ptxas lines were).
    if (blank &&
        (kept.empty() || absl::StripAsciiWhitespace(kept.back()).empty())) {
      continue;
    }
    kept.push_back(line);
    errors_through.push_back(errors_total);
  }
  while (!kept.empty() && absl::StripAsciiWhitespace(kept.back()).empty()) {
    kept.pop_back();
    errors_through.pop_back();
  }

  auto render = [&](size_t lines, bool truncated) {
    std::string text;
    for (size_t i = 0; i < lines; ++i) absl::StrAppend(&text, kept[i], "\n");
    if (truncated) {
      int more = errors_total - (lines == 0 ? 0 : errors_through[lines - 1]);
      if (more > 0) {
        absl::StrAppend(&text, "... (", more,
                        more == 1 ? " more error)\n" : " more errors)\n");
      } else {
        absl::StrAppend(&text, "... (log truncated)\n");
      }
    }
    return text;
  };
  std::string text = render(kept.size(), cut);
  for (size_t lines = kept.size(); text.size() > max_bytes && lines > 0;) {
    text = render(--lines, /*truncated=*/true);
  }
  if (text.size() > max_bytes) text.resize(max_bytes);
  return text;
}

}  // namespace kbench
