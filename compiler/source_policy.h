// SourcePolicy: what a kernel source may ask of the compiler, checked before
// NVRTC sees it (NvrtcCompiler applies it to every compile).
//
// - #include (and #include_next, #import, #embed, __has_include) may name
//   only a CUDA toolkit header (a file under one of the include roots, or
//   one of NVRTC's built-in header names) or one of the project's in-memory
//   headers, by a plain relative name: no absolute path, no "..", no
//   backslash, no macro-expanded include.
// - No device-side kernel launches (dynamic parallelism): no "<<<" in the
//   code, no cudaLaunchDevice / cudaGetParameterBuffer / ... calls.
// - No relocatable device code options (-rdc, -dc, ...).
// - At most max_source_bytes of source.
//
// The scan (compiler/source_scan.h) splices backslash-newlines, strips
// comments and lexes literals and pp-numbers as C++17 does; a source that
// compilers could lex differently is refused. As a safety net every
// physical line that starts with "#include" (or the other directives) must
// name an allowed header, even inside a comment or literal, and no line may
// be an #embed. Messages name the line, the directive and what is allowed;
// they never hold the contents of any file.
//
// Thread safety: immutable after construction; Check* may run concurrently.
#ifndef KBENCH_COMPILER_SOURCE_POLICY_H_
#define KBENCH_COMPILER_SOURCE_POLICY_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace kbench {

class SourcePolicy {
 public:
  struct Options {
    // Directories whose files may be included by relative name (the CUDA
    // include directories; "<dir>/cccl" is added for each).
    std::vector<std::string> include_roots;
    // Names of in-memory headers the project passes to NVRTC (allowed as is).
    std::vector<std::string> in_memory_headers;
    // Largest source accepted, in bytes.
    size_t max_source_bytes = 256 * 1024;
  };

  explicit SourcePolicy(Options options);

  // OK, or InvalidArgument naming `filename`, the line and the rule broken.
  absl::Status CheckSource(absl::string_view source,
                           absl::string_view filename) const;

  // InvalidArgument when `options` ask for relocatable device code.
  static absl::Status CheckOptions(const std::vector<std::string>& options);

  // The message fragment used for every dynamic parallelism refusal.
  static constexpr char kDynamicParallelismMessage[] =
      "dynamic parallelism (device-side kernel launches) is not allowed";

 private:
  // OK unless `text` (line `line` of the source; `physical`: a physical
  // line, else a logical one) is an include-like directive that does not
  // name an allowed header, or any #embed.
  absl::Status CheckDirectiveLine(absl::string_view text,
                                  absl::string_view filename, int line,
                                  bool physical) const;
  absl::Status CheckHeader(absl::string_view directive, char open,
                           absl::string_view path, absl::string_view filename,
                           int line) const;
  bool IsToolkitHeader(absl::string_view path) const;

  Options options_;
  std::vector<std::string> real_roots_;  // realpath of each existing root.
};

}  // namespace kbench

#endif  // KBENCH_COMPILER_SOURCE_POLICY_H_
