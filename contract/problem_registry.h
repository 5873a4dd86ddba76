// ProblemRegistry: the problems kbd serves, loaded once from a problems
// directory: each NAME.textproto file, and each folder NAME/ holding a
// problem.textproto with the files it names (its golden and example
// kernels), is one problem (proto/kbench/v1/problem.proto). A problem that
// does not parse, validate or pass Options::check is refused, with the
// file (and line, where known) and why; the others still load.
//
// Every file is untrusted input: a problem file is read up to
// kMaxProblemFileBytes, a kernel source it names up to kMaxKernelFileBytes
// (what a client may send), a directory up to kMaxProblems entries.
//
// Thread safety: immutable after Load; every method is safe to call
// concurrently. Pointers it returns live as long as the registry.
#ifndef KBENCH_SERVER_CORE_PROBLEM_REGISTRY_H_
#define KBENCH_SERVER_CORE_PROBLEM_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kbench/v1/problem.pb.h"

namespace kbench {

class ProblemRegistry {
 public:
  struct Options {
    // Called for each problem that parsed and validated, before it is
    // kept (kbd: compiles its golden and example kernels); an error
    // refuses the problem with that message. May be empty.
    std::function<absl::Status(const v1::Problem&)> check;
    // When not empty, only the problems of these names are loaded (the
    // others are skipped, not refused, and not checked); a name that does
    // not load makes LoadDir fail with NotFound.
    std::set<std::string> only;
  };

  // A problem file that was not loaded.
  struct Refused {
    std::string file;   // Relative to the problems directory.
    std::string error;  // Why, starting with the file (and line).
  };

  // Largest problem file read, in bytes.
  static constexpr int64_t kMaxProblemFileBytes = int64_t{1} << 20;
  // Largest golden or example kernel source read, in bytes.
  static constexpr int64_t kMaxKernelFileBytes = int64_t{256} << 10;
  // Most entries of a problems directory looked at.
  static constexpr int kMaxProblems = 1000;

  // Loads every problem of `dir` (see the file comment), fills
  // example_source from example_kernel and golden.source from golden.file
  // (relative to the problem file), and validates each with
  // ValidateProblem and its kernels' launch plans. A problem that fails,
  // or whose name an earlier file (in name order) took, is refused.
  // NotFound when `dir` does not exist; InvalidArgument, listing every
  // refusal, when no problem loads.
  static absl::StatusOr<std::unique_ptr<ProblemRegistry>> LoadDir(
      const std::string& dir, const Options& options = {});

  // Reads the kernel source a problem file names in `field` ("golden.file")
  // by its path `relative` to the problem file; errors name both.
  using ReadKernelFn = std::function<absl::StatusOr<std::string>(
      const std::string& field, const std::string& relative)>;
  // One problem file's text, shown as `shown` in messages: parsed, its
  // kernels read with `read_kernel`, validated with its kernels' plans.
  // InvalidArgument naming `shown` and the line (see the file comment);
  // read_kernel's errors as they are. What LoadDir does with each file.
  static absl::StatusOr<v1::Problem> ParseProblem(
      const std::string& text, const std::string& shown,
      const ReadKernelFn& read_kernel);

  // Builds a registry from problems already in memory (tests). Validates.
  static absl::StatusOr<std::unique_ptr<ProblemRegistry>> FromProblems(
      std::vector<v1::Problem> problems);

  // NotFound when unknown, listing the known names:
  // "unknown problem 'foo'; known problems: gather_linear_bf16, ...".
  absl::StatusOr<const v1::Problem*> Find(absl::string_view name) const;

  // Every problem, sorted by name.
  std::vector<const v1::Problem*> List() const;
  // The problems of `suite`, sorted by name; NotFound, naming the known
  // suites, when no problem is in it.
  absl::StatusOr<std::vector<const v1::Problem*>> ListSuite(
      absl::string_view suite) const;
  // Every suite of a loaded problem, sorted.
  std::vector<std::string> Suites() const;
  // The files LoadDir refused, in name order.
  const std::vector<Refused>& refused() const { return refused_; }

  // Where kbd looks when --problems-dir is not given: the first of
  // <dir of the executable>/../share/kbench/problems and
  // <source tree>/kernels/problems that exists.
  static std::string DefaultDir();

 private:
  std::map<std::string, v1::Problem, std::less<>> problems_;
  std::vector<Refused> refused_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_PROBLEM_REGISTRY_H_
