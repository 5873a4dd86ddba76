#include "compiler/source_policy.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "compiler/source_scan.h"

namespace kbench {
namespace {

constexpr char kAllowedIncludes[] =
    "Only CUDA toolkit headers may be included, by name: e.g. <cuda_bf16.h>, "
    "<cuda_fp16.h>, <cuda_fp8.h>, <mma.h>, <cooperative_groups.h>, "
    "<cuda_pipeline.h>, <cuda/barrier>, <cuda/std/...>. Absolute paths, "
    "'..', host files and macro-expanded includes are refused; paste any "
    "helper code into the kernel file instead.";

// Headers NVRTC provides without a file on disk (safe names only).
constexpr const char* kBuiltinHeaders[] = {
    "cuda_fp16.h", "cuda_fp16.hpp", "cuda_bf16.h", "cuda_bf16.hpp",
    "cuda_fp8.h",  "cuda_fp8.hpp",  "cuda_fp6.h",  "cuda_fp6.hpp",
    "cuda_fp4.h",  "cuda_fp4.hpp",  "mma.h",       "cuda_runtime.h",
};

// Identifiers of the device runtime's launch API.
constexpr const char* kDeviceLaunchIdentifiers[] = {
    "cudaLaunchDevice",      "cudaGetParameterBuffer",
    "cudaLaunchKernel",      "cudaGraphLaunch",
    "cudaStreamTailLaunch",  "cudaStreamFireAndForget",
    "cudaDeviceSynchronize",
};

// Directives that read a file.
constexpr const char* kIncludeDirectives[] = {"include_next", "include",
                                              "import", "embed"};

bool IsIdentChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// A user-written fragment for a message: at most 80 printable characters.
std::string Shown(absl::string_view text) {
  std::string out;
  for (char c : text.substr(0, 80)) {
    out.push_back(absl::ascii_isprint(static_cast<unsigned char>(c)) ? c : '?');
  }
  if (text.size() > 80) out += "...";
  return out;
}

// Splits `text` at newlines into (line start offset, line) pairs.
std::vector<std::pair<size_t, absl::string_view>> Lines(
    absl::string_view text) {
  std::vector<std::pair<size_t, absl::string_view>> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == absl::string_view::npos) end = text.size();
    out.emplace_back(start, text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// If `line` is an include-like directive, sets *directive and *rest (the
// text after the directive name) and returns true.
bool ParseDirective(absl::string_view line, absl::string_view* directive,
                    absl::string_view* rest) {
  line = absl::StripLeadingAsciiWhitespace(line);
  // The directive's '#' may be spelled as the digraph "%:" (NVRTC accepts
  // it) or the trigraph "??=" (older dialects): all three are checked.
  if (!absl::ConsumePrefix(&line, "#") && !absl::ConsumePrefix(&line, "%:") &&
      !absl::ConsumePrefix(&line, "?\?=")) {
    return false;
  }
  line = absl::StripLeadingAsciiWhitespace(line);
  for (const char* d : kIncludeDirectives) {
    absl::string_view name(d);
    if (absl::StartsWith(line, name) &&
        (line.size() == name.size() || !IsIdentChar(line[name.size()]))) {
      *directive = name;
      *rest = absl::StripAsciiWhitespace(line.substr(name.size()));
      return true;
    }
  }
  return false;
}

// Splits a header-name operand ("x.h" or <x.h>) into its delimiter and path.
// False for anything else (a macro name, an unterminated name).
bool SplitHeaderName(absl::string_view operand, char* open,
                     absl::string_view* path, size_t* consumed) {
  if (operand.empty()) return false;
  const char o = operand[0];
  const char c = o == '<' ? '>' : (o == '"' ? '"' : '\0');
  if (c == '\0') return false;
  const size_t end = operand.find(c, 1);
  if (end == absl::string_view::npos) return false;
  *open = o;
  *path = operand.substr(1, end - 1);
  *consumed = end + 1;
  return true;
}

}  // namespace

SourcePolicy::SourcePolicy(Options options) : options_(std::move(options)) {
  std::vector<std::string> roots = options_.include_roots;
  for (const std::string& r : options_.include_roots) {
    roots.push_back(r + "/cccl");
  }
  for (const std::string& r : roots) {
    char buf[PATH_MAX];
    if (realpath(r.c_str(), buf) != nullptr) real_roots_.emplace_back(buf);
  }
}

bool SourcePolicy::IsToolkitHeader(absl::string_view path) const {
  for (const std::string& h : options_.in_memory_headers) {
    if (path == h) return true;
  }
  for (const char* h : kBuiltinHeaders) {
    if (path == h) return true;
  }
  for (const std::string& root : real_roots_) {
    const std::string candidate = absl::StrCat(root, "/", path);
    char buf[PATH_MAX];
    if (realpath(candidate.c_str(), buf) == nullptr) continue;
    struct stat st;
    if (stat(buf, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (absl::StartsWith(buf, absl::StrCat(root, "/"))) return true;
  }
  return false;
}

absl::Status SourcePolicy::CheckHeader(absl::string_view directive, char open,
                                       absl::string_view path,
                                       absl::string_view filename,
                                       int line) const {
  const char close = open == '<' ? '>' : '"';
  const std::string what =
      absl::StrCat(filename, ":", line, ": #", directive, " ",
                   std::string(1, open), Shown(path), std::string(1, close));
  auto refuse = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is not allowed: ", why, ". ", kAllowedIncludes));
  };
  if (directive == "embed") return refuse("#embed reads arbitrary files");
  if (path.empty()) return refuse("the header name is empty");
  if (path[0] == '/') return refuse("absolute paths are refused");
  for (char c : path) {
    if (!IsIdentChar(c) && c != '.' && c != '/' && c != '-' && c != '+') {
      return refuse(
          "header names may hold only letters, digits, '_', '.', "
          "'-', '+' and '/'");
    }
  }
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part == "..") return refuse("'..' is refused");
    if (part.empty() || part == ".") return refuse("empty or '.' component");
  }
  if (!IsToolkitHeader(path)) {
    return refuse("it is not a CUDA toolkit header");
  }
  return absl::OkStatus();
}

absl::Status SourcePolicy::CheckDirectiveLine(absl::string_view text,
                                              absl::string_view filename,
                                              int line, bool physical) const {
  absl::string_view directive, rest;
  if (!ParseDirective(text, &directive, &rest)) return absl::OkStatus();
  // Whatever its operand (a header name, a macro, nothing), #embed reads
  // arbitrary files.
  if (directive == "embed") {
    return absl::InvalidArgumentError(absl::StrCat(
        filename, ":", line, ": #embed ", Shown(rest),
        " is not allowed: #embed reads arbitrary files. ", kAllowedIncludes));
  }
  char open = 0;
  absl::string_view path;
  size_t consumed = 0;
  if (!SplitHeaderName(rest, &open, &path, &consumed)) {
    return absl::InvalidArgumentError(absl::StrCat(
        filename, ":", line, ": #", directive, " ", Shown(rest),
        " is not allowed: the header must be written as <name> or \"name\"",
        physical ? " (a directive-looking line counts even inside a comment "
                   "or literal)"
                 : " (macro-expanded includes are refused)",
        ". ", kAllowedIncludes));
  }
  return CheckHeader(directive, open, path, filename, line);
}

absl::Status SourcePolicy::CheckSource(absl::string_view source,
                                       absl::string_view filename) const {
  if (source.size() > options_.max_source_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "source is ", source.size(), " bytes; the limit is ",
        options_.max_source_bytes, " bytes (", options_.max_source_bytes / 1024,
        " KiB). Send one kernel file."));
  }
  const ScannedSource s = ScanSource(source);
  if (!s.refused.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(filename, ":", s.refused_line, ": ", s.refused,
                     " is not allowed: the source must lex the same way for "
                     "every compiler, so that no directive can hide. Use "
                     "ASCII names outside comments and literals, no spaces "
                     "after a line-ending backslash, and raw string "
                     "delimiters of 1-16 plain characters."));
  }

  // Include directives on logical lines (comments gone, splices joined).
  for (const auto& [start, text] : Lines(s.clean)) {
    const int line = start < s.line.size() ? s.line[start] : 1;
    RETURN_IF_ERROR(CheckDirectiveLine(text, filename, line, false));
  }
  // Safety net: directive-looking physical lines, even inside comments or
  // literals, so that it does not depend on how the source was lexed.
  int physical = 0;
  for (absl::string_view text : absl::StrSplit(source, '\n')) {
    RETURN_IF_ERROR(CheckDirectiveLine(text, filename, ++physical, true));
  }

  // __has_include(...) anywhere in the code, and device-side launches.
  for (size_t pos = 0;
       (pos = s.code.find("__has_include", pos)) != std::string::npos;
       pos += 13) {
    if (pos > 0 && IsIdentChar(s.code[pos - 1])) continue;
    size_t p = pos + 13;
    const bool next =
        absl::StartsWith(absl::string_view(s.code).substr(p), "_next");
    if (next) p += 5;
    if (p < s.code.size() && IsIdentChar(s.code[p])) continue;
    absl::string_view rest =
        absl::StripLeadingAsciiWhitespace(absl::string_view(s.clean).substr(p));
    const int line = s.line[pos];
    const absl::string_view directive =
        next ? "__has_include_next" : "__has_include";
    char open = 0;
    absl::string_view path;
    size_t consumed = 0;
    if (!absl::ConsumePrefix(&rest, "(") ||
        !SplitHeaderName(absl::StripLeadingAsciiWhitespace(rest), &open, &path,
                         &consumed)) {
      return absl::InvalidArgumentError(absl::StrCat(
          filename, ":", line, ": ", directive,
          " must name a header as <name> or \"name\". ", kAllowedIncludes));
    }
    if (absl::Status st = CheckHeader(directive, open, path, filename, line);
        !st.ok()) {
      return st;
    }
  }
  if (size_t pos = s.code.find("<<<"); pos != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        filename, ":", s.line[pos],
        ": a device-side kernel launch (<<<...>>>): ",
        kDynamicParallelismMessage,
        ". Every kernel is launched by the host from the launch plan "
        "(// @kb launch ...)."));
  }
  for (const char* ident : kDeviceLaunchIdentifiers) {
    const absl::string_view id(ident);
    for (size_t pos = 0; (pos = s.code.find(ident, pos)) != std::string::npos;
         pos += id.size()) {
      if (pos > 0 && IsIdentChar(s.code[pos - 1])) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          filename, ":", s.line[pos], ": ", id,
          " is part of the device "
          "runtime: ",
          kDynamicParallelismMessage,
          ". Every kernel is launched by the host from the launch plan."));
    }
  }
  return absl::OkStatus();
}

absl::Status SourcePolicy::CheckOptions(
    const std::vector<std::string>& options) {
  for (const std::string& o : options) {
    absl::string_view v(o);
    const bool rdc = v == "-rdc" || v == "-dc" || v == "--device-c" ||
                     absl::StartsWith(v, "-rdc=true") ||
                     absl::StartsWith(v, "--relocatable-device-code=true") ||
                     v == "--relocatable-device-code" || v == "-dlto" ||
                     v == "--dlink-time-opt" || absl::StartsWith(v, "-ewp") ||
                     absl::StartsWith(v, "--extensible-whole-program");
    if (rdc) {
      return absl::InvalidArgumentError(absl::StrCat(
          "compile option ", Shown(v),
          " is not allowed: relocatable device code (and with it dynamic "
          "parallelism) is refused; kernels are compiled whole-program"));
    }
  }
  return absl::OkStatus();
}

}  // namespace kbench
