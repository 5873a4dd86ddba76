// ProblemRegistry: the problems kbd serves, loaded once from text-format
// files (kernels/problems/*.textproto).
//
// Thread safety: immutable after Load; every method is safe to call
// concurrently. Pointers it returns live as long as the registry.
#ifndef KBENCH_SERVER_CORE_PROBLEM_REGISTRY_H_
#define KBENCH_SERVER_CORE_PROBLEM_REGISTRY_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kbench/v1/problem.pb.h"

namespace kbench {

class ProblemRegistry {
 public:
  // Loads every *.textproto file in `dir`, fills example_source from the
  // file named by example_kernel (relative to the problem file), and
  // validates each with ValidateProblem. A parse error, an invalid problem,
  // a missing example or a duplicate name fails the whole load, with the
  // file name in the message.
  static absl::StatusOr<std::unique_ptr<ProblemRegistry>> LoadDir(
      const std::string& dir);

  // Builds a registry from problems already in memory (tests). Validates.
  static absl::StatusOr<std::unique_ptr<ProblemRegistry>> FromProblems(
      std::vector<v1::Problem> problems);

  // NotFound when unknown, listing the known names:
  // "unknown problem 'foo'; known problems: gather_linear_bf16, ...".
  absl::StatusOr<const v1::Problem*> Find(absl::string_view name) const;

  // Every problem, sorted by name.
  std::vector<const v1::Problem*> List() const;

  // Where kbd looks when --problems-dir is not given: the first of
  // <dir of the executable>/../share/kbench/problems and
  // <source tree>/kernels/problems that exists.
  static std::string DefaultDir();

 private:
  std::map<std::string, v1::Problem, std::less<>> problems_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_PROBLEM_REGISTRY_H_
