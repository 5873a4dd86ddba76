// NvrtcCompiler: compiles one kernel source to a cubin with NVRTC and
// reports diagnostics and ptxas resource usage. Needs no GPU.
//
// Thread safety: NVRTC is thread safe and the class holds only immutable
// options, so one instance may compile from many threads at once.
#ifndef KBENCH_COMMON_NVRTC_COMPILER_H_
#define KBENCH_COMMON_NVRTC_COMPILER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kbench/v1/report.pb.h"

namespace kbench {

struct CompileOptions {
  // Target, "sm_XY" (e.g. "sm_90"); NVRTC emits a cubin for it.
  std::string arch = "sm_90";
  // Adds -lineinfo, so profilers can map samples to source lines.
  bool line_info = true;
  // Include directories for the CUDA headers (cuda_bf16.h, ...). Default:
  // the toolkit's include directory found at build time.
  std::vector<std::string> include_dirs;
};

// A compile's outcome. A source that does not compile is not an error
// status: report.success is false and the diagnostics say why.
struct CompileOutput {
  v1::CompileReport report;  // plan is left empty; the caller fills it.
  std::string cubin;         // Empty unless report.success.
};

class NvrtcCompiler {
 public:
  explicit NvrtcCompiler(CompileOptions defaults = {});

  // "13.0", from nvrtcVersion.
  static std::string Version();

  // The NVRTC option list for `arch`: -arch=sm_XY, -Xptxas -v, -lineinfo,
  // --std=c++17, -I for each include dir (defaults' dirs).
  std::vector<std::string> OptionsFor(absl::string_view arch) const;

  // sha256 (hex) of source, options, NVRTC version and arch: the compile
  // cache key.
  std::string CacheKey(absl::string_view source, absl::string_view arch) const;

  // Compiles `source` (named `filename` in diagnostics) for `arch`.
  // report fields set: success, arch, options, nvrtc_version, digest
  // (= CacheKey), compile_ms, diagnostics, log (trimmed: see TrimLog),
  // kernels (from the ptxas info lines), cubin_bytes. A failed compile always
  // has at least one "error" diagnostic (ptxas may fail silently, e.g. on
  // static shared memory over 48 KiB; one is then synthesized, at line 0).
  // InvalidArgument for an arch that is not "sm_" followed by digits and an
  // optional "a" (sm_90, sm_90a), or for a source holding a NUL byte;
  // Internal for NVRTC failures that are not the source's fault (invalid
  // option, out of memory...), with NVRTC's error string and log.
  absl::StatusOr<CompileOutput> Compile(absl::string_view source,
                                        absl::string_view filename,
                                        absl::string_view arch) const;

 private:
  CompileOptions defaults_;
};

// Parses NVRTC's "file(LINE): error: MESSAGE" lines (also "warning",
// "warning #177-D", "remark", "catastrophic error" as "error"), and the
// line-less "nvrtc: error: ..." and "ptxas error   : ..." lines (line 0).
// Source excerpt lines and "N errors detected ..." summaries are skipped.
// When `filename` is given, a diagnostic located in another file (a header)
// gets that location prefixed to its message and line 0, or the line of a
// following "detected during instantiation ... at line N of <filename>".
std::vector<v1::Diagnostic> ParseNvrtcDiagnostics(
    absl::string_view log, absl::string_view filename = "");

// Parses ptxas -v output ("Compiling entry function 'NAME' for 'sm_90'",
// "Used N registers, used B barriers, S bytes smem, C bytes cmem[0]",
// "F bytes stack frame, SS bytes spill stores, SL bytes spill loads") into
// one entry per kernel, in order of appearance.
std::vector<v1::KernelResources> ParsePtxasInfo(absl::string_view log);

// The log without ptxas info lines (resources, "Compile time"; they are in
// report.kernels), cut after `max_errors` errors (keeping each error's
// source excerpt lines) and to at most `max_bytes` (whole lines), ending with
// "... (N more errors)" when errors were cut ("... (1 more error)", or
// "... (log truncated)" when only non-error lines were).
std::string TrimLog(absl::string_view log, int max_errors = 10,
                    size_t max_bytes = 8192);

}  // namespace kbench

#endif  // KBENCH_COMMON_NVRTC_COMPILER_H_
