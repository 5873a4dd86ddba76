#include "compiler/nvrtc_compiler.h"

#include <nvrtc.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/digest.h"
#include "base/status_macros.h"
#include "base/untrusted_input.h"
#include "compiler/nvrtc_log.h"
#include "contract/job_defaults.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

// ptxas rejects more static shared memory than this per block, on every
// architecture, without writing a message to the NVRTC log.
constexpr int64_t kMaxStaticSmemBytes = 48 * 1024;

// The include directories CMake found for the toolkit (a ';'-separated
// list), else the usual install location.
// The toolkit's include dirs, each followed by its cccl/ subdirectory when
// there is one (CUDA 13 keeps <cuda/std/...>, <cuda/barrier>, CUB and
// thrust there, and their headers include each other by those names).
std::vector<std::string> DefaultIncludeDirs() {
  std::vector<std::string> dirs;
#ifdef KBENCH_CUDA_INCLUDE_DIR
  dirs = absl::StrSplit(KBENCH_CUDA_INCLUDE_DIR, ';', absl::SkipWhitespace());
#endif
  if (dirs.empty()) dirs = {"/usr/local/cuda/include"};
  std::vector<std::string> out;
  for (const std::string& d : dirs) {
    out.push_back(d);
    struct stat st;
    const std::string cccl = d + "/cccl";
    if (stat(cccl.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      out.push_back(cccl);
    }
  }
  return out;
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

// The policy for `options`' include dirs (the defaults when empty).
SourcePolicy::Options PolicyOptions(const CompileOptions& options) {
  SourcePolicy::Options p;
  p.include_roots = options.include_dirs.empty() ? DefaultIncludeDirs()
                                                 : options.include_dirs;
  return p;
}

// NVRTC's messages when a kernel launches a kernel without -rdc.
bool MentionsDeviceLaunch(absl::string_view log) {
  return absl::StrContains(log, "device-side kernel launch") ||
         absl::StrContains(log, "separate compilation mode") ||
         absl::StrContains(log, "relocatable device code") ||
         absl::StrContains(log, "cudaGetParameterBuffer") ||
         absl::StrContains(log, "cudaLaunchDevice");
}

// "cannot open source file "X": Permission denied" (an existing file the
// jail hides) and "cannot open source file "X"" (no such file) must read
// alike, or the message is an oracle for which host files exist: the
// reason after the name is dropped, in the log and so in the diagnostics.
void ScrubOpenErrors(std::string* log) {
  static constexpr absl::string_view kOpen = "cannot open source file \"";
  size_t pos = 0;
  while ((pos = log->find(kOpen.data(), pos, kOpen.size())) !=
         std::string::npos) {
    const size_t close = log->find('"', pos + kOpen.size());
    if (close == std::string::npos) break;
    const size_t eol = log->find('\n', close);
    const size_t end = eol == std::string::npos ? log->size() : eol;
    log->erase(close + 1, end - close - 1);
    pos = close + 1;
  }
}

// A source can make NVRTC print millions of diagnostics (an #error in a
// recursive macro, say): the report keeps the first kMaxDiagnostics, each
// message cut to kMaxDiagnosticBytes, and says how many were left out.
constexpr size_t kMaxDiagnostics = 50;
constexpr size_t kMaxDiagnosticBytes = 1024;

void BoundDiagnostics(std::vector<v1::Diagnostic>* diagnostics) {
  for (v1::Diagnostic& d : *diagnostics) {
    if (d.message().size() > kMaxDiagnosticBytes) {
      d.mutable_message()->resize(kMaxDiagnosticBytes);
      d.mutable_message()->append("... (message cut)");
    }
  }
  if (diagnostics->size() <= kMaxDiagnostics) return;
  const size_t more = diagnostics->size() - kMaxDiagnostics;
  // A failed compile must keep an error among what is shown.
  auto is_error = [](const v1::Diagnostic& d) {
    return d.severity() == "error";
  };
  const auto first_error =
      std::find_if(diagnostics->begin(), diagnostics->end(), is_error);
  if (first_error - diagnostics->begin() >=
      static_cast<std::ptrdiff_t>(kMaxDiagnostics)) {
    (*diagnostics)[kMaxDiagnostics - 1] = *first_error;
  }
  diagnostics->resize(kMaxDiagnostics);
  v1::Diagnostic& last = diagnostics->back();
  last.mutable_message()->append(
      absl::StrCat(" ... (", more, " more diagnostics not shown)"));
}

}  // namespace

NvrtcCompiler::NvrtcCompiler(CompileOptions defaults)
    : defaults_(std::move(defaults)), policy_(PolicyOptions(defaults_)) {
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
  // No --no-source-include: it also stops toolkit headers from finding
  // their own neighbours ("mma.hpp" from crt/mma.h, "info.h" from
  // cooperative_groups/details), so <mma.h> and <cooperative_groups.h> did
  // not compile. What it guarded (a quoted include read from the current
  // directory) the source policy refuses and kbcompile's jail cannot read.
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
  RETURN_IF_ERROR(ValidateFileName(filename));
  const std::string name(filename.empty() ? kDefaultKernelFileName : filename);
  RETURN_IF_ERROR(policy_.CheckSource(source, name));
  const std::vector<std::string> options = OptionsFor(arch);
  RETURN_IF_ERROR(SourcePolicy::CheckOptions(options));
  const std::string source_text(source);
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
  ScrubOpenErrors(&log);
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
  if (result != NVRTC_SUCCESS && MentionsDeviceLaunch(log)) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": ", SourcePolicy::kDynamicParallelismMessage,
        " (NVRTC: relocatable device code is required for a device-side "
        "launch, and it is refused). Launch every kernel from the launch "
        "plan."));
  }
  std::vector<v1::KernelResources> kernels = ParsePtxasInfo(log);
  std::vector<v1::Diagnostic> diagnostics = ParseNvrtcDiagnostics(log, name);
  if (!report.success()) {
    bool has_error = false;
    for (const v1::Diagnostic& d : diagnostics) {
      has_error = has_error || d.severity() == "error";
    }
    if (!has_error) diagnostics.push_back(SilentFailureDiagnostic(kernels));
  }
  BoundDiagnostics(&diagnostics);
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

}  // namespace kbench
