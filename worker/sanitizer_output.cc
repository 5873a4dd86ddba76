#include "worker/sanitizer_output.h"

#include <cctype>
#include <map>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "contract/job_defaults.h"

namespace kbench {
namespace {

constexpr absl::string_view kPrefix = "=========";
constexpr int kMaxDetails = 4;
constexpr size_t kMaxLineText = 200;

absl::string_view BaseName(absl::string_view path) {
  const size_t slash = path.find_last_of('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

bool AllDigits(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

bool IsHexOffset(absl::string_view s) {
  if (!absl::ConsumePrefix(&s, "0x") || s.empty()) return false;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// The first integer in `s`, or -1.
int FirstNumber(absl::string_view s) {
  size_t i = 0;
  while (i < s.size() && !std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  size_t j = i;
  while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
  int n = -1;
  if (j > i && !absl::SimpleAtoi(s.substr(i, j - i), &n)) n = -1;
  return n;
}

// Removes a trailing " [N hazards]" and returns N (0 if absent).
int64_t StripHazardCount(absl::string_view* s) {
  const size_t open = s->rfind(" [");
  if (open == absl::string_view::npos || !absl::EndsWith(*s, "]")) return 0;
  absl::string_view inside = s->substr(open + 2, s->size() - open - 3);
  if (!absl::StrContains(inside, "hazard")) return 0;
  const int n = FirstNumber(inside);
  *s = s->substr(0, open);
  return n > 0 ? n : 0;
}

// "(31, 0, 0)" -> "(31,0,0)".
std::string Compact(absl::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != ' ') out.push_back(c);
  }
  return out;
}

// The parenthesised group that follows `word` in `s`, compacted; "" if none.
std::string GroupAfter(absl::string_view s, absl::string_view word) {
  const size_t at = s.find(word);
  if (at == absl::string_view::npos) return "";
  const size_t open = s.find('(', at + word.size());
  const size_t close = s.find(')', open);
  if (open == absl::string_view::npos || close == absl::string_view::npos) {
    return "";
  }
  return Compact(s.substr(open, close - open + 1));
}

struct Record {
  v1::SanitizeFinding finding;
  bool open = false;
  bool has_location = false;
  bool in_backtrace = false;
  bool api_error = false;  // "Program hit ... on CUDA API call": not kept.
  int64_t hazards = 0;
};

class Parser {
 public:
  Parser(absl::string_view tool, absl::string_view filename,
         absl::string_view source)
      : tool_(tool), filename_(BaseName(filename)), source_(source) {}

  void Line(absl::string_view raw) {
    absl::string_view line = absl::StripTrailingAsciiWhitespace(raw);
    if (!absl::ConsumePrefix(&line, kPrefix)) return;  // Program output.
    size_t indent = 0;
    while (indent < line.size() && line[indent] == ' ') ++indent;
    const absl::string_view text = line.substr(indent);
    if (text.empty()) {
      Close();
      return;
    }
    if (indent <= 1) {
      Header(text);
    } else if (record_.open) {
      Detail(text);
    }
  }

  SanitizerParse Finish() {
    Close();
    return std::move(out_);
  }

 private:
  void Header(absl::string_view text) {
    Close();
    if (text == "COMPUTE-SANITIZER" ||
        absl::StartsWith(text, "Target application returned") ||
        absl::StartsWith(text, "LEAK SUMMARY")) {
      return;
    }
    if (absl::StartsWith(text, "ERROR SUMMARY") ||
        absl::StartsWith(text, "RACECHECK SUMMARY")) {
      out_.summary = std::string(text);
      out_.summary_errors = FirstNumber(text.substr(text.find(':') + 1));
      return;
    }
    record_ = Record();
    record_.open = true;
    record_.finding.set_tool(tool_);
    absl::string_view t = text;
    // Racecheck's analysis report: "Error: Race reported between Write
    // access at LOC".
    for (absl::string_view level :
         {"ERROR: ", "Error: ", "WARNING: ", "Warning: "}) {
      if (absl::ConsumePrefix(&t, level)) break;
    }
    if (absl::ConsumePrefix(&t, "Race reported between ")) {
      const size_t at = t.find(" at ");
      const absl::string_view access = t.substr(0, at);
      record_.finding.set_kind(absl::StrCat("Race reported between ", access));
      if (at != absl::string_view::npos) SetLocation(t.substr(at + 4));
      return;
    }
    // Racecheck's hazard report: "Potential WAW hazard detected at __shared__
    // 0x0 in block (0, 0, 0) :".
    if (absl::StartsWith(t, "Potential ") && absl::StrContains(t, "hazard")) {
      const size_t in_block = t.find(" in block ");
      absl::string_view kind = t.substr(0, in_block);
      const size_t addr = kind.find(" 0x");
      record_.finding.set_kind(std::string(kind.substr(0, addr)));
      if (addr != absl::string_view::npos) {
        record_.finding.set_address(
            absl::StrCat("__shared__ offset", kind.substr(addr)));
      }
      record_.finding.set_block(GroupAfter(t, " in block "));
      return;
    }
    if (absl::StartsWith(t, "Program hit ")) record_.api_error = true;
    record_.finding.set_kind(std::string(absl::StripSuffix(t, ":")));
  }

  void Detail(absl::string_view text) {
    if (record_.in_backtrace) return;
    if (absl::StartsWith(text, "Saved host backtrace") ||
        absl::StartsWith(text, "Host Frame") ||
        absl::StartsWith(text, "Device Frame")) {
      record_.in_backtrace = true;
      return;
    }
    v1::SanitizeFinding& f = record_.finding;
    absl::string_view t = text;
    if (absl::ConsumePrefix(&t, "at ") && !record_.has_location) {
      SetLocation(t);
      return;
    }
    if (absl::StartsWith(text, "by thread ")) {
      f.set_thread(GroupAfter(text, "by thread"));
      f.set_block(GroupAfter(text, " in block"));
      return;
    }
    if (absl::StartsWith(text, "Address ")) {
      f.set_address(std::string(text));
      return;
    }
    // Racecheck: "and Read access at LOC [4 hazards]".
    t = text;
    if (absl::ConsumePrefix(&t, "and ") &&
        absl::StrContains(t, " access at ")) {
      const size_t at = t.find(" at ");
      f.set_other_access(std::string(t.substr(0, at)));
      absl::string_view loc = t.substr(at + 4);
      record_.hazards = StripHazardCount(&loc);
      f.set_kind(absl::StrCat(f.kind(), " and ", f.other_access()));
      SanitizerLocation other;
      if (ParseSanitizerLocation(loc, &other)) {
        f.set_other_line(other.line);
        if (MatchesJob(other.file)) {
          f.set_other_source_line(SourceLineText(source_, other.line));
        }
      }
      return;
    }
    // Hazard report: "Write Thread (0, 0, 0) at LOC".
    const size_t thread = text.find(" Thread (");
    const size_t at = text.find(") at ");
    if (thread != absl::string_view::npos && at != absl::string_view::npos &&
        thread < at) {
      const std::string who = std::string(text.substr(0, at + 1));
      if (!record_.has_location) {
        f.set_thread(GroupAfter(text, " Thread"));
        SetLocation(text.substr(at + 5));
      } else {
        f.set_other_access(who);
        SanitizerLocation other;
        if (ParseSanitizerLocation(text.substr(at + 5), &other)) {
          f.set_other_line(other.line);
          if (MatchesJob(other.file)) {
            f.set_other_source_line(SourceLineText(source_, other.line));
          }
        }
      }
      return;
    }
    if (f.details_size() < kMaxDetails) f.add_details(std::string(text));
  }

  void SetLocation(absl::string_view text) {
    record_.hazards += StripHazardCount(&text);
    SanitizerLocation loc;
    if (!ParseSanitizerLocation(text, &loc)) return;
    record_.has_location = true;
    v1::SanitizeFinding& f = record_.finding;
    f.set_kernel(loc.kernel);
    f.set_file(loc.file);
    f.set_line(loc.line);
    if (MatchesJob(loc.file))
      f.set_source_line(SourceLineText(source_, loc.line));
  }

  bool MatchesJob(absl::string_view file) const {
    return !file.empty() && BaseName(file) == filename_;
  }

  void Close() {
    if (!record_.open) return;
    record_.open = false;
    if (record_.api_error) return;
    v1::SanitizeFinding& f = record_.finding;
    const int64_t n = record_.hazards > 0 ? record_.hazards : 1;
    const std::string key =
        absl::StrCat(f.kind(), "|", f.kernel(), "|", f.file(), "|", f.line(),
                     "|", f.other_line());
    auto it = index_.find(key);
    if (it != index_.end()) {
      v1::SanitizeFinding& seen = out_.findings[it->second];
      seen.set_count(seen.count() + n);
      return;
    }
    f.set_count(n);
    index_[key] = out_.findings.size();
    out_.findings.push_back(std::move(f));
  }

  const std::string tool_;
  const absl::string_view filename_;
  const absl::string_view source_;
  Record record_;
  std::map<std::string, size_t> index_;
  SanitizerParse out_;
};

}  // namespace

bool ParseSanitizerLocation(absl::string_view text, SanitizerLocation* loc) {
  *loc = SanitizerLocation();
  text = absl::StripAsciiWhitespace(text);
  if (text.empty()) return false;
  const size_t in = text.find(" in ");
  const absl::string_view left = text.substr(0, in);
  const absl::string_view right =
      in == absl::string_view::npos ? "" : text.substr(in + 4);
  if (IsHexOffset(left)) {
    // Older form: "0x1f0 in /path/kernel.cu:17:kernel_name".
    for (size_t colon = right.find(':'); colon != absl::string_view::npos;
         colon = right.find(':', colon + 1)) {
      const size_t end = right.find(':', colon + 1);
      const absl::string_view digits = right.substr(
          colon + 1, end == absl::string_view::npos ? absl::string_view::npos
                                                    : end - colon - 1);
      if (AllDigits(digits) && absl::SimpleAtoi(digits, &loc->line)) {
        loc->file = std::string(right.substr(0, colon));
        if (end != absl::string_view::npos) {
          loc->kernel = std::string(right.substr(end + 1));
        }
        return true;
      }
    }
    loc->file = std::string(right);
    return !right.empty();
  }
  const size_t plus = left.rfind("+0x");
  loc->kernel = std::string(left.substr(0, plus));
  const size_t colon = right.rfind(':');
  if (colon != absl::string_view::npos && AllDigits(right.substr(colon + 1)) &&
      absl::SimpleAtoi(right.substr(colon + 1), &loc->line)) {
    loc->file = std::string(right.substr(0, colon));
  } else {
    loc->file = std::string(right);
  }
  return !loc->kernel.empty() || !loc->file.empty();
}

std::string SourceLineText(absl::string_view source, int line) {
  if (line <= 0) return "";
  int n = 1;
  for (absl::string_view l : absl::StrSplit(source, '\n')) {
    if (n++ == line) {
      std::string text(absl::StripAsciiWhitespace(l));
      if (text.size() > kMaxLineText)
        text = text.substr(0, kMaxLineText) + "...";
      return text;
    }
  }
  return "";
}

SanitizerParse ParseSanitizerOutput(absl::string_view tool,
                                    absl::string_view output,
                                    absl::string_view filename,
                                    absl::string_view source) {
  Parser parser(tool, filename.empty() ? kDefaultKernelFileName : filename,
                source);
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    parser.Line(line);
  }
  return parser.Finish();
}

}  // namespace kbench
