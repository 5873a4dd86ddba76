// Helpers shared by the libFuzzer targets in tests/fuzz: the shipped
// problems and example kernel (read once from the source tree), quiet logs,
// and a loud failure for a broken invariant (an oracle, not a sanitizer).
//
// Thread safety: libFuzzer calls a target from one thread; the loaders
// initialise on first use and are then read-only.
#ifndef KBENCH_TESTS_FUZZ_FUZZ_UTIL_H_
#define KBENCH_TESTS_FUZZ_FUZZ_UTIL_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "kbench/v1/problem.pb.h"

namespace kbench {
namespace fuzz {

// The problem files of kernels/problems of the source tree this build came
// from (NAME.textproto and NAME/problem.textproto), gather_linear's first,
// the rest in path order. Aborts (with the path) when none can be read: a fuzz
// target that silently lost its problems would fuzz nothing.
const std::vector<v1::Problem>& ShippedProblems();

// kernels/examples/gather_linear_naive.cu, the example every shipped
// problem's plan is written like.
const std::string& ExampleKernel();

// Turns spdlog off: the code under test logs on every call, and stderr is
// where libFuzzer prints its findings.
void QuietLogs();

// Prints "fuzz invariant broken: <what>" and up to 300 bytes of `detail`
// (escaped), then aborts so that libFuzzer saves the input as a crash.
[[noreturn]] void Fail(absl::string_view what, absl::string_view detail = "");

// The bytes as a string_view.
inline absl::string_view AsText(const uint8_t* data, size_t size) {
  return absl::string_view(reinterpret_cast<const char*>(data), size);
}

}  // namespace fuzz
}  // namespace kbench

#endif  // KBENCH_TESTS_FUZZ_FUZZ_UTIL_H_
