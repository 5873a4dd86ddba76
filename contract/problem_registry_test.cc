#include "contract/problem_registry.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

const std::string kProblemsDir =
    std::string(KBENCH_SOURCE_DIR) + "/kernels/problems";

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

// A fresh directory with problems/ and examples/ subfolders, removed at the
// end of the test.
class TempTree {
 public:
  TempTree() {
    std::string pattern =
        (fs::temp_directory_path() / "kb_registry_test_XXXXXX").string();
    char* made = mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr);
    root_ = pattern;
    fs::create_directories(problems());
    fs::create_directories(root_ / "examples");
  }
  ~TempTree() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  fs::path problems() const { return root_ / "problems"; }
  fs::path examples() const { return root_ / "examples"; }

  // Copies the shipped problems and examples.
  void CopyShipped() {
    for (const auto& entry : fs::directory_iterator(kProblemsDir)) {
      fs::copy_file(entry.path(), problems() / entry.path().filename());
    }
    for (const auto& entry : fs::directory_iterator(
             std::string(KBENCH_SOURCE_DIR) + "/kernels/examples")) {
      fs::copy_file(entry.path(), examples() / entry.path().filename());
    }
  }

 private:
  fs::path root_;
};

std::string LoadError(const fs::path& dir) {
  absl::StatusOr<std::unique_ptr<ProblemRegistry>> registry =
      ProblemRegistry::LoadDir(dir.string());
  EXPECT_FALSE(registry.ok()) << dir;
  return registry.ok() ? "" : std::string(registry.status().message());
}

TEST(ProblemRegistryTest, LoadsShippedProblems) {
  absl::StatusOr<std::unique_ptr<ProblemRegistry>> registry =
      ProblemRegistry::LoadDir(kProblemsDir);
  ASSERT_TRUE(registry.ok()) << registry.status();
  std::vector<const v1::Problem*> problems = (*registry)->List();
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0]->name(), "gather_linear_bf16");
  EXPECT_EQ(problems[1]->name(), "gather_linear_fp32");
  for (const v1::Problem* p : problems) {
    EXPECT_FALSE(p->example_source().empty()) << p->name();
  }
  EXPECT_EQ(problems[1]->example_source(),
            ReadText(std::string(KBENCH_SOURCE_DIR) +
                     "/kernels/examples/gather_linear_naive.cu"));

  absl::StatusOr<const v1::Problem*> fp32 =
      (*registry)->Find("gather_linear_fp32");
  ASSERT_TRUE(fp32.ok());
  EXPECT_EQ(*fp32, problems[1]);
  EXPECT_EQ((*fp32)->entry_point(), "gather_linear");
}

TEST(ProblemRegistryTest, FindUnknownListsNames) {
  absl::StatusOr<std::unique_ptr<ProblemRegistry>> registry =
      ProblemRegistry::LoadDir(kProblemsDir);
  ASSERT_TRUE(registry.ok()) << registry.status();
  absl::StatusOr<const v1::Problem*> missing = (*registry)->Find("foo");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "unknown problem 'foo'; known problems: gather_linear_bf16, "
            "gather_linear_fp32");
}

TEST(ProblemRegistryTest, ParseErrorNamesTheFile) {
  TempTree tree;
  tree.CopyShipped();
  WriteText(tree.problems() / "broken.textproto",
            "name: \"broken\"\ndims { name: \"R\" min: oops }\n");
  const std::string error = LoadError(tree.problems());
  EXPECT_THAT(error, AllOf(HasSubstr("broken.textproto:2:"),
                           HasSubstr("cannot parse problem file")));
}

TEST(ProblemRegistryTest, InvalidProblemNamesTheFile) {
  TempTree tree;
  tree.CopyShipped();
  fs::path file = tree.problems() / "gather_linear_fp32.textproto";
  std::string text = ReadText(file);
  const std::string from = "atol: 1e-3";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "atol: 0");
  WriteText(file, text);
  EXPECT_THAT(LoadError(tree.problems()),
              AllOf(HasSubstr("gather_linear_fp32.textproto"),
                    HasSubstr("tolerance.atol")));
}

TEST(ProblemRegistryTest, MissingExampleNamesTheFile) {
  TempTree tree;
  tree.CopyShipped();
  fs::remove(tree.examples() / "gather_linear_naive_bf16.cu");
  EXPECT_THAT(LoadError(tree.problems()),
              AllOf(HasSubstr("gather_linear_bf16.textproto"),
                    HasSubstr("example_kernel "
                              "'../examples/gather_linear_naive_bf16.cu' "
                              "not found")));
}

TEST(ProblemRegistryTest, BrokenExamplePlanNamesTheFile) {
  TempTree tree;
  tree.CopyShipped();
  WriteText(tree.examples() / "gather_linear_naive.cu",
            "// @kb launch gather_linear grid(B, cdiv(N, 256)) block(256)\n");
  EXPECT_THAT(LoadError(tree.problems()),
              AllOf(HasSubstr("gather_linear_fp32.textproto"),
                    HasSubstr("example kernel"), HasSubstr("uses 'N'")));
}

TEST(ProblemRegistryTest, DuplicateNameNamesBothFiles) {
  TempTree tree;
  tree.CopyShipped();
  fs::copy_file(tree.problems() / "gather_linear_fp32.textproto",
                tree.problems() / "z_copy.textproto");
  EXPECT_THAT(LoadError(tree.problems()),
              AllOf(HasSubstr("z_copy.textproto: problem name "
                              "'gather_linear_fp32' is already used by"),
                    HasSubstr("gather_linear_fp32.textproto")));
}

TEST(ProblemRegistryTest, EmptyOrMissingDir) {
  TempTree tree;
  absl::StatusOr<std::unique_ptr<ProblemRegistry>> registry =
      ProblemRegistry::LoadDir(tree.problems().string());
  EXPECT_EQ(registry.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(registry.status().message()),
              HasSubstr("no *.textproto problem files"));
  registry = ProblemRegistry::LoadDir((tree.problems() / "nope").string());
  EXPECT_EQ(registry.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(registry.status().message()),
              HasSubstr("does not exist"));
}

TEST(ProblemRegistryTest, FromProblems) {
  v1::Problem problem;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      ReadText(kProblemsDir + "/gather_linear_fp32.textproto"), &problem));
  absl::StatusOr<std::unique_ptr<ProblemRegistry>> registry =
      ProblemRegistry::FromProblems({problem});
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_EQ((*registry)->List().size(), 1u);
  EXPECT_TRUE((*registry)->Find("gather_linear_fp32").ok());

  registry = ProblemRegistry::FromProblems({problem, problem});
  EXPECT_THAT(std::string(registry.status().message()),
              HasSubstr("'gather_linear_fp32' appears twice"));

  problem.set_trials(0);
  registry = ProblemRegistry::FromProblems({problem});
  EXPECT_THAT(std::string(registry.status().message()),
              HasSubstr("trials: must be positive"));
}

TEST(ProblemRegistryTest, DefaultDirFallsBackToSourceTree) {
  // Tests run from build/bin, which has no ../share/kbench/problems.
  const std::string dir = ProblemRegistry::DefaultDir();
  EXPECT_EQ(fs::path(dir), fs::path(kProblemsDir).lexically_normal());
  EXPECT_TRUE(fs::is_directory(dir));
}

}  // namespace
}  // namespace kbench
