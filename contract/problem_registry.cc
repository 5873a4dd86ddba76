#include "contract/problem_registry.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/paths.h"
#include "base/status_macros.h"
#include "contract/launch_plan.h"
#include "contract/problem_util.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

#ifndef KBENCH_SOURCE_DIR
#define KBENCH_SOURCE_DIR "."
#endif

namespace kbench {
namespace {

namespace fs = std::filesystem;

// Keeps the text-format parser's errors as "file:line:column: message".
class CollectErrors : public google::protobuf::io::ErrorCollector {
 public:
  explicit CollectErrors(std::string file) : file_(std::move(file)) {}
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    errors_.push_back(
        absl::StrCat(file_, ":", line + 1, ":", column + 1, ": ", message));
  }
  void AddWarning(int line, google::protobuf::io::ColumnNumber column,
                  const std::string& message) override {}
  std::string Joined() const { return absl::StrJoin(errors_, "; "); }

 private:
  std::string file_;
  std::vector<std::string> errors_;
};

absl::StatusOr<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot read '", path.string(), "'"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return absl::DataLossError(
        absl::StrCat("error while reading '", path.string(), "'"));
  }
  return text.str();
}

// Prefixes `status` with the file it came from.
absl::Status InFile(const fs::path& path, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat(path.string(), ": ", status.message()));
}

absl::StatusOr<v1::Problem> LoadFile(const fs::path& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  v1::Problem problem;
  CollectErrors errors(path.string());
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &problem)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot parse problem file ", errors.Joined()));
  }
  if (!problem.example_source().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path.string(),
                     ": example_source is filled in by the registry; name "
                     "the file in example_kernel instead"));
  }
  if (!problem.example_kernel().empty()) {
    const fs::path example = path.parent_path() / problem.example_kernel();
    absl::StatusOr<std::string> source = ReadFile(example);
    if (!source.ok()) {
      return absl::NotFoundError(
          absl::StrCat(path.string(), ": example_kernel '",
                       problem.example_kernel(), "' not found (looked for ",
                       example.lexically_normal().string(), ")"));
    }
    problem.set_example_source(*std::move(source));
  }
  return problem;
}

// Validates one problem, and its example's launch plan against it.
absl::Status ValidateWithExample(const v1::Problem& problem) {
  RETURN_IF_ERROR(ValidateProblem(problem));
  if (problem.example_source().empty()) return absl::OkStatus();
  absl::StatusOr<v1::LaunchPlan> plan =
      ParseLaunchPlan(problem.example_source());
  absl::Status status =
      plan.ok() ? ValidateLaunchPlan(*plan, problem) : plan.status();
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("problem '", problem.name(), "': example kernel '",
                     problem.example_kernel(), "': ", status.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ProblemRegistry>> ProblemRegistry::LoadDir(
    const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(
        absl::StrCat("problems directory '", dir, "' does not exist"));
  }
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".textproto" && entry.is_regular_file(ec)) {
      files.push_back(entry.path());
    }
  }
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot list '", dir, "': ", ec.message()));
  }
  if (files.empty()) {
    return absl::NotFoundError(
        absl::StrCat("no *.textproto problem files in '", dir, "'"));
  }
  std::sort(files.begin(), files.end());
  auto registry = std::make_unique<ProblemRegistry>();
  std::map<std::string, fs::path> origin;
  for (const fs::path& path : files) {
    ASSIGN_OR_RETURN(v1::Problem problem, LoadFile(path));
    absl::Status status = ValidateWithExample(problem);
    if (!status.ok()) return InFile(path, status);
    auto [it, inserted] = origin.emplace(problem.name(), path);
    if (!inserted) {
      return absl::InvalidArgumentError(
          absl::StrCat(path.string(), ": problem name '", problem.name(),
                       "' is already used by ", it->second.string()));
    }
    const std::string name = problem.name();
    registry->problems_.emplace(name, std::move(problem));
  }
  return registry;
}

absl::StatusOr<std::unique_ptr<ProblemRegistry>> ProblemRegistry::FromProblems(
    std::vector<v1::Problem> problems) {
  auto registry = std::make_unique<ProblemRegistry>();
  for (v1::Problem& problem : problems) {
    RETURN_IF_ERROR(ValidateWithExample(problem));
    const std::string name = problem.name();
    if (!registry->problems_.emplace(name, std::move(problem)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("problem name '", name, "' appears twice"));
    }
  }
  return registry;
}

absl::StatusOr<const v1::Problem*> ProblemRegistry::Find(
    absl::string_view name) const {
  auto it = problems_.find(name);
  if (it != problems_.end()) return &it->second;
  std::vector<std::string> names;
  for (const auto& [known, problem] : problems_) names.push_back(known);
  return absl::NotFoundError(absl::StrCat(
      "unknown problem '", name, "'; known problems: ",
      names.empty() ? std::string("(none)") : absl::StrJoin(names, ", ")));
}

std::vector<const v1::Problem*> ProblemRegistry::List() const {
  std::vector<const v1::Problem*> out;
  for (const auto& [name, problem] : problems_) out.push_back(&problem);
  return out;
}

std::string ProblemRegistry::DefaultDir() {
  std::error_code ec;
  const fs::path installed =
      (fs::path(ExeDir()) / ".." / "share" / "kbench" / "problems")
          .lexically_normal();
  if (fs::is_directory(installed, ec)) return installed.string();
  return (fs::path(KBENCH_SOURCE_DIR) / "kernels" / "problems")
      .lexically_normal()
      .string();
}

}  // namespace kbench
