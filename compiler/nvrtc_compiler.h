// NvrtcCompiler: compiles one kernel source to a cubin with NVRTC and
// reports diagnostics and ptxas resource usage. Needs no GPU.
//
// Thread safety: NVRTC is thread safe and the class holds only immutable
// options, so one instance may compile from many threads at once.
#ifndef KBENCH_COMPILER_NVRTC_COMPILER_H_
#define KBENCH_COMPILER_NVRTC_COMPILER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/nvrtc_log.h"
#include "compiler/source_policy.h"
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

  // The options this compiler was built with (include_dirs filled in).
  const CompileOptions& options() const { return defaults_; }

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
  // optional "a" (sm_90, sm_90a), for a source holding a NUL byte, or for a
  // source the SourcePolicy refuses (an #include that is not a CUDA toolkit
  // header, a device-side launch, over 256 KiB) -- NVRTC never sees it;
  // Internal for NVRTC failures that are not the source's fault (invalid
  // option, out of memory...), with NVRTC's error string and log.
  absl::StatusOr<CompileOutput> Compile(absl::string_view source,
                                        absl::string_view filename,
                                        absl::string_view arch) const;

 private:
  CompileOptions defaults_;
  SourcePolicy policy_;
};

}  // namespace kbench

#endif  // KBENCH_COMPILER_NVRTC_COMPILER_H_
