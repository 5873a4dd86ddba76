// Parsers for the NVRTC program log: diagnostics, ptxas resource usage and
// the trimmed log kept in a report. NvrtcCompiler (compiler/nvrtc_compiler.h,
// which includes this header) uses them on every compile.
//
// Thread safety: free functions on values; safe to call concurrently.
#ifndef KBENCH_COMPILER_NVRTC_LOG_H_
#define KBENCH_COMPILER_NVRTC_LOG_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "kbench/v1/report.pb.h"

namespace kbench {

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

#endif  // KBENCH_COMPILER_NVRTC_LOG_H_
