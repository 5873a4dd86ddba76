#include "common/nvrtc_compiler.h"

#include <nvrtc.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/digest.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

// ptxas rejects more static shared memory than this per block, on every
// architecture, without writing a message to the NVRTC log.
constexpr int64_t kMaxStaticSmemBytes = 48 * 1024;

constexpr char kDefaultFilename[] = "kernel.cu";

// The include directories CMake found for the toolkit (a ';'-separated
// list), else the usual install location.
std::vector<std::string> DefaultIncludeDirs() {
#ifdef KBENCH_CUDA_INCLUDE_DIR
  std::vector<std::string> dirs =
      absl::StrSplit(KBENCH_CUDA_INCLUDE_DIR, ';', absl::SkipWhitespace());
  if (!dirs.empty()) return dirs;
#endif
  return {"/usr/local/cuda/include"};
}

// "sm_" followed by digits and an optional "a" (arch-specific features).
bool IsValidArch(absl::string_view arch) {
  if (!absl::ConsumePrefix(&arch, "sm_")) return false;
  absl::ConsumeSuffix(&arch, "a");
  if (arch.empty()) return false;
  for (char c : arch) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// Owns an nvrtcProgram; destroys it on every path.
class ProgramHandle {
 public:
  ProgramHandle() = default;
  ProgramHandle(const ProgramHandle&) = delete;
  ProgramHandle& operator=(const ProgramHandle&) = delete;
  ~ProgramHandle() {
    if (program_ != nullptr) nvrtcDestroyProgram(&program_);
  }
  nvrtcProgram* out() { return &program_; }
  nvrtcProgram get() const { return program_; }

 private:
  nvrtcProgram program_ = nullptr;
};

absl::Status NvrtcError(absl::string_view what, nvrtcResult result,
                        absl::string_view log = "") {
  std::string message =
      absl::StrCat(what, " failed: ", nvrtcGetErrorString(result), " (code ",
                   static_cast<int>(result), ")");
  if (!log.empty()) absl::StrAppend(&message, "; NVRTC log: ", log);
  return absl::InternalError(message);
}

absl::StatusOr<std::string> ProgramLog(nvrtcProgram program) {
  size_t size = 0;
  nvrtcResult result = nvrtcGetProgramLogSize(program, &size);
  if (result != NVRTC_SUCCESS) {
    return NvrtcError("nvrtcGetProgramLogSize", result);
  }
  std::string log(size, '\0');
  if (size > 0) {
    result = nvrtcGetProgramLog(program, &log[0]);
    if (result != NVRTC_SUCCESS) {
      return NvrtcError("nvrtcGetProgramLog", result);
    }
  }
  // The size counts the terminating NUL.
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

// Entry names from the PTX (".entry NAME(" lines): the kernels a cubin
// holds, even when ptxas printed nothing.
std::vector<std::string> PtxEntries(nvrtcProgram program) {
  std::vector<std::string> names;
  size_t size = 0;
  if (nvrtcGetPTXSize(program, &size) != NVRTC_SUCCESS || size == 0) {
    return names;
  }
  std::string ptx(size, '\0');
  if (nvrtcGetPTX(program, &ptx[0]) != NVRTC_SUCCESS) return names;
  for (absl::string_view line : absl::StrSplit(ptx, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    absl::ConsumePrefix(&line, ".visible");
    absl::ConsumePrefix(&line, ".weak");
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, ".entry")) continue;
    line = absl::StripLeadingAsciiWhitespace(line);
    const size_t end = line.find_first_of("( \t");
    names.emplace_back(line.substr(0, end));
  }
  return names;
}

absl::StatusOr<std::string> ProgramCubin(nvrtcProgram program) {
  size_t size = 0;
  nvrtcResult result = nvrtcGetCUBINSize(program, &size);
  if (result != NVRTC_SUCCESS) return NvrtcError("nvrtcGetCUBINSize", result);
  std::string cubin(size, '\0');
  if (size > 0) {
    result = nvrtcGetCUBIN(program, &cubin[0]);
    if (result != NVRTC_SUCCESS) return NvrtcError("nvrtcGetCUBIN", result);
  }
  return cubin;
}

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

// Why a compile that NVRTC failed has no error diagnostic: ptxas rejects
// some kernels without writing to the log.
v1::Diagnostic SilentFailureDiagnostic(
    const std::vector<v1::KernelResources>& kernels) {
  v1::Diagnostic diagnostic;
  diagnostic.set_severity("error");
  for (const v1::KernelResources& kernel : kernels) {
    if (kernel.static_smem_bytes() > kMaxStaticSmemBytes) {
      diagnostic.set_message(absl::StrCat(
          "kernel '", kernel.name(), "' uses ", kernel.static_smem_bytes(),
          " bytes of static __shared__ memory; the limit is ",
          kMaxStaticSmemBytes,
          " bytes (48 KiB) per block. Use dynamic shared memory (extern "
          "__shared__ with the launch's smem size) for more."));
      return diagnostic;
    }
  }
  diagnostic.set_message(
      "NVRTC reported a compilation failure without an error message "
      "(usually ptxas rejecting a kernel, e.g. for exceeding a resource "
      "limit); see the log.");
  return diagnostic;
}

}  // namespace

NvrtcCompiler::NvrtcCompiler(CompileOptions defaults)
    : defaults_(std::move(defaults)) {
  if (defaults_.include_dirs.empty()) {
    defaults_.include_dirs = DefaultIncludeDirs();
  }
  // NVRTC 12.9+ keeps a disk cache; on a hit it skips ptxas, whose -v lines
  // (registers, shared memory, spills) every report needs. kbench has its
  // own content-addressed cache, so NVRTC's is turned off for this process.
  // Compilers are built at start-up, before other threads exist.
  setenv("CUDA_CACHE_DISABLE", "1", /*overwrite=*/1);
}

std::string NvrtcCompiler::Version() {
  static const std::string* const kVersion = [] {
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) {
      return new std::string("unknown");
    }
    return new std::string(absl::StrCat(major, ".", minor));
  }();
  return *kVersion;
}

std::vector<std::string> NvrtcCompiler::OptionsFor(
    absl::string_view arch) const {
  std::vector<std::string> options = {absl::StrCat("-arch=", arch), "-Xptxas",
                                      "-v"};
  if (defaults_.line_info) options.push_back("-lineinfo");
  options.push_back("--std=c++17");
  for (const std::string& dir : defaults_.include_dirs) {
    options.push_back(absl::StrCat("-I", dir));
  }
  return options;
}

std::string NvrtcCompiler::CacheKey(absl::string_view source,
                                    absl::string_view arch) const {
  // Every field is length-prefixed, so no two inputs encode alike.
  std::string encoded = "kbench-nvrtc-cache-key-v1\n";
  auto append = [&encoded](absl::string_view field) {
    absl::StrAppend(&encoded, field.size(), ":", field, "\n");
  };
  append(Version());
  append(arch);
  append(source);
  std::vector<std::string> options = OptionsFor(arch);
  absl::StrAppend(&encoded, "options ", options.size(), "\n");
  for (const std::string& option : options) append(option);
  return Sha256Hex(encoded);
}

absl::StatusOr<CompileOutput> NvrtcCompiler::Compile(
    absl::string_view source, absl::string_view filename,
    absl::string_view arch) const {
  if (!IsValidArch(arch)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid arch \"", arch,
        "\": expected \"sm_\" followed by the compute capability digits and "
        "an optional \"a\", e.g. \"sm_90\", \"sm_90a\" or \"sm_120\""));
  }
  if (size_t nul = source.find('\0'); nul != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel source contains a NUL byte at offset ", nul,
                     "; the source must be plain text"));
  }
  const std::string name(filename.empty() ? kDefaultFilename : filename);
  const std::string source_text(source);
  const std::vector<std::string> options = OptionsFor(arch);
  std::vector<const char*> option_ptrs;
  option_ptrs.reserve(options.size());
  for (const std::string& option : options) {
    option_ptrs.push_back(option.c_str());
  }

  ProgramHandle program;
  nvrtcResult result =
      nvrtcCreateProgram(program.out(), source_text.c_str(), name.c_str(),
                         /*numHeaders=*/0, nullptr, nullptr);
  if (result != NVRTC_SUCCESS) return NvrtcError("nvrtcCreateProgram", result);

  const auto start = std::chrono::steady_clock::now();
  result = nvrtcCompileProgram(
      program.get(), static_cast<int>(option_ptrs.size()), option_ptrs.data());
  const double compile_ms = std::chrono::duration<double, std::milli>(
                                std::chrono::steady_clock::now() - start)
                                .count();
  ASSIGN_OR_RETURN(std::string log, ProgramLog(program.get()));
  if (result != NVRTC_SUCCESS && result != NVRTC_ERROR_COMPILATION) {
    return NvrtcError(absl::StrCat("nvrtcCompileProgram of ", name), result,
                      TrimLog(log));
  }

  CompileOutput output;
  v1::CompileReport& report = output.report;
  report.set_success(result == NVRTC_SUCCESS);
  report.set_arch(std::string(arch));
  for (const std::string& option : options) report.add_options(option);
  report.set_nvrtc_version(Version());
  report.set_digest(CacheKey(source, arch));
  report.set_compile_ms(compile_ms);
  std::vector<v1::KernelResources> kernels = ParsePtxasInfo(log);
  std::vector<v1::Diagnostic> diagnostics = ParseNvrtcDiagnostics(log, name);
  if (!report.success()) {
    bool has_error = false;
    for (const v1::Diagnostic& d : diagnostics) {
      has_error = has_error || d.severity() == "error";
    }
    if (!has_error) diagnostics.push_back(SilentFailureDiagnostic(kernels));
  }
  for (v1::Diagnostic& d : diagnostics)
    *report.add_diagnostics() = std::move(d);
  for (v1::KernelResources& k : kernels) *report.add_kernels() = std::move(k);
  report.set_log(TrimLog(log));
  if (report.success()) {
    ASSIGN_OR_RETURN(output.cubin, ProgramCubin(program.get()));
    report.set_cubin_bytes(static_cast<int64_t>(output.cubin.size()));
    if (report.kernels_size() == 0) {
      // ptxas printed no resource lines (a cache hit elsewhere): the names
      // still come from the PTX; resources stay unknown (0).
      for (std::string& name : PtxEntries(program.get())) {
        report.add_kernels()->set_name(std::move(name));
      }
    }
  }
  spdlog::debug("nvrtc: compiled {} for {} in {:.1f} ms: {}, {} kernel(s)",
                name, report.arch(), compile_ms,
                report.success() ? "ok" : "failed", report.kernels_size());
  return output;
}

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
