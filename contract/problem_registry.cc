#include "contract/problem_registry.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/paths.h"
#include "base/status_macros.h"
#include "base/untrusted_input.h"
#include "contract/launch_plan.h"
#include "contract/problem_data.h"
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
    errors_.push_back(absl::StrCat(file_, ":", line + 1, ":", column + 1,
                                   ": cannot parse the problem: ", message));
  }
  void AddWarning(int line, google::protobuf::io::ColumnNumber column,
                  const std::string& message) override {}
  std::string Joined() const { return absl::StrJoin(errors_, "; "); }

 private:
  std::string file_;
  std::vector<std::string> errors_;
};

// Reads a regular file of at most `max_bytes`; messages call it `shown`
// (relative to the problems directory: a client may read them). Opened
// without blocking and checked on the open descriptor, so that a FIFO or a
// device a symlink points at (/proc/kmsg) cannot stall kbd's start.
absl::StatusOr<std::string> ReadFile(const fs::path& path,
                                     const std::string& shown,
                                     int64_t max_bytes) {
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (fd >= 0) close(fd);
    return absl::NotFoundError(absl::StrCat("cannot read '", shown, "'"));
  }
  std::string text;
  if (st.st_size > max_bytes) {
    close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat("'", shown, "' is larger than ", max_bytes, " bytes"));
  }
  text.resize(static_cast<size_t>(max_bytes) + 1);
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(fd);
      return absl::DataLossError(
          absl::StrCat("error while reading '", shown, "'"));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  text.resize(got);
  if (static_cast<int64_t>(text.size()) > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", shown, "' is larger than ", max_bytes, " bytes"));
  }
  return text;
}

// Whether `path` is `dir` or below it (both canonical).
bool Within(const fs::path& path, const fs::path& dir) {
  const fs::path rel = path.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

// The line (1-based) of the field a ValidateProblem message starts with
// ("problem 'p': dims[2] (B): ..."), or 0 when it names no field of the
// file.
int FieldLine(const google::protobuf::TextFormat::ParseInfoTree& tree,
              absl::string_view message) {
  const size_t colon = message.find("': ");
  if (!absl::StartsWith(message, "problem '") ||
      colon == absl::string_view::npos) {
    return 0;
  }
  absl::string_view rest = message.substr(colon + 3);
  const size_t end = rest.find_first_of("[ (:.");
  const std::string field(rest.substr(0, end));
  int index = -1;
  if (end != absl::string_view::npos && rest[end] == '[') {
    const absl::string_view digits = rest.substr(end + 1);
    if (!absl::SimpleAtoi(digits.substr(0, digits.find(']')), &index)) {
      index = -1;
    }
  }
  const google::protobuf::FieldDescriptor* fd =
      v1::Problem::descriptor()->FindFieldByName(field);
  if (fd == nullptr) return 0;
  // ParseInfoTree wants -1 for a singular field and an index for a
  // repeated one (it aborts otherwise); past the end it finds nothing.
  index = fd->is_repeated() ? std::max(index, 0) : -1;
  const google::protobuf::TextFormat::ParseLocation where =
      tree.GetLocation(fd, index);
  return where.line >= 0 ? where.line + 1 : 0;
}

// Where the files a problem names may be: under `root` (the problems
// directory's parent: kernels/ in the repository, share/kbench in a
// bundle, where the example kernels are), and not in another problem's
// folder of `problems`. All canonical; `own` is the problem's folder, or
// empty for a NAME.textproto.
struct FileRoots {
  fs::path root;
  fs::path problems;
  fs::path own;
};

// Reads the source `relative` names (relative to the problem file at
// `path`, shown as `shown`) for the field `field`; sets `*canonical`.
absl::StatusOr<std::string> ReadNamed(
    const fs::path& path, const std::string& shown, const std::string& field,
    const std::string& relative, const FileRoots& roots, fs::path* canonical) {
  const std::string named =
      (fs::path(shown).parent_path() / relative).lexically_normal().string();
  auto refuse = [&](absl::StatusCode code, absl::string_view why) {
    return absl::Status(
        code, absl::StrCat(shown, ": ", field, " '", relative, "': ", why));
  };
  if (fs::path(relative).is_absolute()) {
    return refuse(absl::StatusCode::kInvalidArgument,
                  "must be a path relative to the problem file");
  }
  std::error_code ec;
  *canonical = fs::canonical(path.parent_path() / relative, ec);
  if (ec) {
    return refuse(absl::StatusCode::kNotFound,
                  absl::StrCat("not found (looked for ", named, ")"));
  }
  // Symlinks are resolved first: a link inside the library to a file
  // outside it is outside it.
  if (!Within(*canonical, roots.root)) {
    return refuse(absl::StatusCode::kInvalidArgument,
                  "is outside the problem library (the problems "
                  "directory's parent and below)");
  }
  const fs::path in_problems = canonical->lexically_relative(roots.problems);
  if (Within(*canonical, roots.problems) &&
      std::distance(in_problems.begin(), in_problems.end()) > 1 &&
      (roots.own.empty() || !Within(*canonical, roots.own))) {
    return refuse(absl::StatusCode::kInvalidArgument,
                  absl::StrCat("is in another problem's folder ('",
                               in_problems.begin()->string(), "')"));
  }
  absl::StatusOr<std::string> source =
      ReadFile(*canonical, named, ProblemRegistry::kMaxKernelFileBytes);
  if (!source.ok()) {
    return refuse(source.status().code(), source.status().message());
  }
  return source;
}

// Validates one problem, and its kernels' launch plans against it.
absl::Status ValidateWithKernels(const v1::Problem& problem) {
  RETURN_IF_ERROR(ValidateProblem(problem));
  std::optional<v1::LaunchPlan> baseline_plan, expert_plan;
  for (const ProblemSource& k : ProblemSources(problem)) {
    absl::StatusOr<v1::LaunchPlan> plan = ParseLaunchPlan(*k.source);
    absl::Status status =
        plan.ok() ? ValidateLaunchPlan(*plan, problem) : plan.status();
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("problem '", problem.name(), "': ", k.what, " '",
                       *k.file, "': ", status.message()));
    }
    if (k.kind == ProblemSource::kBaseline) baseline_plan = *plan;
    if (k.kind == ProblemSource::kExpert) expert_plan = *plan;
  }
  if (problem.reference() == v1::REFERENCE_OP_GOLDEN_KERNEL) {
    RETURN_IF_ERROR(ValidateBaselineSteps(
        problem, baseline_plan ? &*baseline_plan : nullptr));
    if (problem.has_expert()) {
      RETURN_IF_ERROR(
          ValidateBaselineSteps(problem, problem.expert(), "expert",
                                expert_plan ? &*expert_plan : nullptr));
    }
  }
  return absl::OkStatus();
}

// Parses the problem file at `path` (shown as `shown` in messages), reads
// the kernels it names and validates it all. An example is shown to
// clients and a golden or baseline is not, so an example may not be the
// file one of them is.
absl::StatusOr<v1::Problem> LoadFile(const fs::path& path,
                                     const std::string& shown,
                                     FileRoots roots) {
  ASSIGN_OR_RETURN(
      const std::string text,
      ReadFile(path, shown, ProblemRegistry::kMaxProblemFileBytes));
  if (path.filename() == "problem.textproto") {
    std::error_code ec;
    roots.own = fs::canonical(path.parent_path(), ec);
  }
  std::map<std::string, fs::path> read;  // Field -> its canonical file.
  return ProblemRegistry::ParseProblem(
      text, shown,
      [&](const std::string& field,
          const std::string& relative) -> absl::StatusOr<std::string> {
        fs::path canonical;
        ASSIGN_OR_RETURN(
            std::string source,
            ReadNamed(path, shown, field, relative, roots, &canonical));
        for (const auto& [other, file] : read) {
          if (file == canonical &&
              (other == "example_kernel" || field == "example_kernel")) {
            return absl::InvalidArgumentError(absl::StrCat(
                shown, ": ", other, " and ", field, " name the same file '",
                relative,
                "'; an example is shown to clients, a golden or baseline "
                "is not"));
          }
        }
        read.emplace(field, canonical);
        return source;
      });
}

// The problem files of `dir`, by the name shown in messages (relative to
// `dir`): NAME.textproto, and NAME/problem.textproto for each folder.
absl::StatusOr<std::map<std::string, fs::path>> ProblemFiles(
    const std::string& dir) {
  std::error_code ec;
  std::map<std::string, fs::path> files;
  int entries = 0;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (++entries > ProblemRegistry::kMaxProblems) {
      return absl::ResourceExhaustedError(
          absl::StrCat("'", dir, "' has more than ",
                       ProblemRegistry::kMaxProblems, " entries"));
    }
    const fs::path& path = it->path();
    const std::string name = path.filename().string();
    if (name.empty() || name[0] == '.') continue;
    if (it->is_directory(ec)) {
      files.emplace(name + "/problem.textproto", path / "problem.textproto");
    } else if (path.extension() == ".textproto" && it->is_regular_file(ec)) {
      files.emplace(name, path);
    }
  }
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot list '", dir, "': ", ec.message()));
  }
  return files;
}

}  // namespace

absl::StatusOr<v1::Problem> ProblemRegistry::ParseProblem(
    const std::string& text, const std::string& shown,
    const ReadKernelFn& read_kernel) {
  v1::Problem problem;
  CollectErrors errors(shown);
  google::protobuf::TextFormat::ParseInfoTree tree;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(&tree);
  if (!parser.ParseFromString(text, &problem)) {
    return absl::InvalidArgumentError(errors.Joined());
  }
  if (!problem.example_source().empty() || !problem.golden().source().empty() ||
      !problem.baseline().source().empty() ||
      !problem.expert().source().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        shown,
        ": example_source, golden.source, baseline.source and expert.source "
        "are filled in by the registry; name the files in example_kernel, "
        "golden.file, baseline.file and expert.file"));
  }
  if (!problem.example_kernel().empty()) {
    ASSIGN_OR_RETURN(*problem.mutable_example_source(),
                     read_kernel("example_kernel", problem.example_kernel()));
  }
  if (!problem.golden().file().empty()) {
    ASSIGN_OR_RETURN(*problem.mutable_golden()->mutable_source(),
                     read_kernel("golden.file", problem.golden().file()));
  }
  if (!problem.baseline().file().empty()) {
    ASSIGN_OR_RETURN(*problem.mutable_baseline()->mutable_source(),
                     read_kernel("baseline.file", problem.baseline().file()));
  }
  if (!problem.expert().file().empty()) {
    ASSIGN_OR_RETURN(*problem.mutable_expert()->mutable_source(),
                     read_kernel("expert.file", problem.expert().file()));
  }
  // Every string goes into replies (ListProblems) and jobs, which must be
  // UTF-8; one bad title broke ListProblems for every client and every job
  // of the problem (review, 2026-12-05).
  if (const std::string bad = FindNonUtf8Field(problem); !bad.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        shown, ": ", bad,
        " is not UTF-8 (an octal or hex escape in the file, or the bytes of "
        "a kernel file it names); problem files and their kernels must be "
        "UTF-8"));
  }
  const absl::Status status = ValidateWithKernels(problem);
  if (!status.ok()) {
    const int line = FieldLine(tree, status.message());
    return absl::Status(
        status.code(),
        absl::StrCat(shown, line > 0 ? absl::StrCat(":", line) : std::string(),
                     ": ", status.message()));
  }
  return problem;
}

absl::StatusOr<std::unique_ptr<ProblemRegistry>> ProblemRegistry::LoadDir(
    const std::string& dir, const Options& options) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(
        absl::StrCat("problems directory '", dir, "' does not exist"));
  }
  ASSIGN_OR_RETURN(const auto files, ProblemFiles(dir));
  if (files.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "no problems in '", dir,
        "' (NAME.textproto files or NAME/problem.textproto folders)"));
  }
  auto registry = std::make_unique<ProblemRegistry>();
  std::map<std::string, std::string> origin;
  FileRoots roots;
  roots.problems = fs::canonical(dir, ec);
  if (ec) {
    return absl::NotFoundError(
        absl::StrCat("cannot resolve problems directory '", dir, "'"));
  }
  roots.root = roots.problems.parent_path();
  for (const auto& [shown, path] : files) {
    absl::StatusOr<v1::Problem> problem = LoadFile(path, shown, roots);
    if (problem.ok() && !options.only.empty() &&
        options.only.count(problem->name()) == 0) {
      continue;
    }
    absl::Status status = problem.status();
    // A name taken by an earlier file is refused before its kernels are
    // compiled.
    if (status.ok()) {
      auto it = origin.find(problem->name());
      if (it != origin.end()) {
        status = absl::InvalidArgumentError(
            absl::StrCat(shown, ": problem name '", problem->name(),
                         "' is already used by ", it->second));
      }
    }
    if (status.ok() && options.check) {
      status = options.check(*problem);
      if (!status.ok()) {
        status = absl::Status(status.code(),
                              absl::StrCat(shown, ": ", status.message()));
      }
    }
    if (status.ok()) origin.emplace(problem->name(), shown);
    if (!status.ok()) {
      registry->refused_.push_back({shown, ScrubUtf8(status.message())});
      continue;
    }
    const std::string name = problem->name();
    registry->problems_.emplace(name, *std::move(problem));
  }
  for (const std::string& name : options.only) {
    if (registry->problems_.count(name) > 0) continue;
    std::vector<std::string> why;
    for (const Refused& r : registry->refused_) why.push_back(r.error);
    return absl::NotFoundError(absl::StrCat(
        "problem '", name, "' (asked for by name) did not load from '", dir,
        "'",
        why.empty() ? std::string(": no file holds it")
                    : absl::StrCat("; refused: ", absl::StrJoin(why, "; "))));
  }
  if (registry->problems_.empty()) {
    std::vector<std::string> why;
    for (const Refused& r : registry->refused_) why.push_back(r.error);
    return absl::InvalidArgumentError(absl::StrCat(
        "no problem of '", dir, "' loaded: ", absl::StrJoin(why, "; ")));
  }
  return registry;
}

absl::StatusOr<std::unique_ptr<ProblemRegistry>> ProblemRegistry::FromProblems(
    std::vector<v1::Problem> problems) {
  auto registry = std::make_unique<ProblemRegistry>();
  for (v1::Problem& problem : problems) {
    RETURN_IF_ERROR(ValidateWithKernels(problem));
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

absl::StatusOr<std::vector<const v1::Problem*>> ProblemRegistry::ListSuite(
    absl::string_view suite) const {
  std::vector<const v1::Problem*> out;
  for (const auto& [name, problem] : problems_) {
    for (const std::string& s : problem.suites()) {
      if (s == suite) {
        out.push_back(&problem);
        break;
      }
    }
  }
  if (out.empty()) {
    const std::vector<std::string> known = Suites();
    return absl::NotFoundError(absl::StrCat(
        "unknown suite '", suite, "'; known suites: ",
        known.empty() ? std::string("(none)") : absl::StrJoin(known, ", ")));
  }
  return out;
}

std::vector<std::string> ProblemRegistry::Suites() const {
  std::set<std::string> all;
  for (const auto& [name, problem] : problems_) {
    all.insert(problem.suites().begin(), problem.suites().end());
  }
  return {all.begin(), all.end()};
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
