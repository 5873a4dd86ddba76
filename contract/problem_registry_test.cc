#include "contract/problem_registry.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "contract/problem_util.h"
#include "contract/registry_fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

using testing::kProblemsDir;
using testing::kRowMean;
using testing::ReadText;
using testing::RefusedError;
using testing::TempTree;
using testing::WriteText;

TEST(ProblemRegistryTest, LoadsShippedProblems) {
  absl::StatusOr<std::unique_ptr<ProblemRegistry>> registry =
      ProblemRegistry::LoadDir(kProblemsDir);
  ASSERT_TRUE(registry.ok()) << registry.status();
  // Every shipped problem validates, its kernels' plans with it: none is
  // refused.
  for (const ProblemRegistry::Refused& r : (*registry)->refused()) {
    ADD_FAILURE() << r.error;
  }
  std::vector<const v1::Problem*> problems = (*registry)->List();
  std::vector<std::string> names;
  names.reserve(problems.size());
  for (const v1::Problem* p : problems) names.push_back(p->name());
  EXPECT_THAT(names,
              ::testing::ElementsAre(
                  "allreduce_residual_rmsnorm_fp32", "attention_fp32",
                  "gather_linear_bf16", "gather_linear_fp32", "gelu_tanh_fp32",
                  "layernorm_fp32", "linear_reduce_scatter_fp32", "matmul_bf16",
                  "matmul_fp32", "moe_dispatch_grouped_linear_fp32",
                  "rmsnorm_fp32", "row_sum_fp32", "softmax_fp32"));
  // Every problem is data: a golden kernel, a baseline, check cases.
  for (const v1::Problem* p : problems) {
    EXPECT_FALSE(p->example_source().empty()) << p->name();
    EXPECT_EQ(p->reference(), v1::REFERENCE_OP_GOLDEN_KERNEL) << p->name();
    EXPECT_FALSE(p->golden().source().empty()) << p->name();
    EXPECT_GE(p->baseline().steps_size(), 1) << p->name();
    EXPECT_GE(p->check_cases_size(), 1) << p->name();
    EXPECT_FALSE(p->suites().empty()) << p->name();
  }
  EXPECT_EQ((*registry)->ListSuite("core")->size(), 8u);
  EXPECT_EQ((*registry)->ListSuite("collectives")->size(), 5u);
  // Two problems declare an expert baseline: one fused kernel each, read
  // from its file; the public view names it without its source.
  for (const char* name : {"rmsnorm_fp32", "allreduce_residual_rmsnorm_fp32"}) {
    const v1::Problem* p = *(*registry)->Find(name);
    ASSERT_TRUE(p->has_expert()) << name;
    EXPECT_EQ(p->expert().steps_size(), 1) << name;
    EXPECT_EQ(p->expert().source(),
              ReadText(std::string(KBENCH_SOURCE_DIR) + "/kernels/problems/" +
                       name + "/expert.cu"));
    const v1::Problem view = PublicView(*p);
    EXPECT_EQ(view.expert().name(), p->expert().name());
    EXPECT_TRUE(view.expert().source().empty());
  }
  EXPECT_FALSE(PublicView(**(*registry)->Find("row_sum_fp32")).has_expert());
  problems = {*(*registry)->Find("gather_linear_bf16"),
              *(*registry)->Find("gather_linear_fp32")};
  EXPECT_EQ(problems[1]->example_source(),
            ReadText(std::string(KBENCH_SOURCE_DIR) +
                     "/kernels/examples/gather_linear_naive.cu"));

  absl::StatusOr<const v1::Problem*> fp32 =
      (*registry)->Find("gather_linear_fp32");
  ASSERT_TRUE(fp32.ok());
  EXPECT_EQ(*fp32, problems[1]);
  EXPECT_EQ((*fp32)->entry_point(), "gather_linear");
  // Its baseline is PyTorch's eager pair: the concat kernel of its file,
  // then one cuBLASLt GEMM with the bias in its epilogue.
  EXPECT_EQ((*fp32)->baseline().steps_size(), 2);
  EXPECT_EQ((*fp32)->baseline().steps(0).launch(), "concat");
  EXPECT_EQ((*fp32)->baseline().steps(1).matmul().bias(), "bias");
  EXPECT_EQ((*fp32)->baseline().source(),
            ReadText(std::string(KBENCH_SOURCE_DIR) +
                     "/kernels/problems/gather_linear_fp32/baseline.cu"));
}

// Options::only serves part of the directory (kbd --problems), and Find
// names what is served.
TEST(ProblemRegistryTest, FindUnknownListsNames) {
  ProblemRegistry::Options options;
  options.only = {"gather_linear_bf16", "gather_linear_fp32"};
  int checked = 0;
  options.check = [&](const v1::Problem&) {
    ++checked;
    return absl::OkStatus();
  };
  absl::StatusOr<std::unique_ptr<ProblemRegistry>> registry =
      ProblemRegistry::LoadDir(kProblemsDir, options);
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_EQ(checked, 2);  // The others are neither checked nor refused.
  EXPECT_TRUE((*registry)->refused().empty());
  absl::StatusOr<const v1::Problem*> missing = (*registry)->Find("foo");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "unknown problem 'foo'; known problems: gather_linear_bf16, "
            "gather_linear_fp32");
  // A name the directory does not serve stops the load.
  options.only = {"gather_linear_fp32", "no_such_problem"};
  registry = ProblemRegistry::LoadDir(kProblemsDir, options);
  EXPECT_EQ(registry.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(registry.status().message()),
              HasSubstr("problem 'no_such_problem' (asked for by name) did "
                        "not load"));
}

TEST(ProblemRegistryTest, ParseErrorNamesTheFile) {
  TempTree tree;
  tree.CopyShipped();
  WriteText(tree.problems() / "broken.textproto",
            "name: \"broken\"\ndims { name: \"R\" min: oops }\n");
  const std::string error = RefusedError(tree.problems(), "broken.textproto");
  EXPECT_THAT(error, ::testing::StartsWith("broken.textproto:2:23: cannot "
                                           "parse the problem: "));
}

// An operator's problem file from before gather_linear became data names
// the removed C++ reference: refused at its line, the other problems load.
TEST(ProblemRegistryTest, TheRemovedCxxReferenceIsRefusedWithItsLine) {
  TempTree tree;
  tree.CopyShipped();
  fs::create_directories(tree.problems() / "old");
  std::string text =
      ReadText(tree.problems() / "gather_linear_fp32" / "problem.textproto");
  const std::string from = "reference: REFERENCE_OP_GOLDEN_KERNEL";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(),
               "reference: REFERENCE_OP_GATHER_LINEAR");
  text.replace(text.find("name: \"gather_linear_fp32\""),
               std::string("name: \"gather_linear_fp32\"").size(),
               "name: \"old\"");
  WriteText(tree.problems() / "old" / "problem.textproto", text);
  EXPECT_THAT(RefusedError(tree.problems(), "old/problem.textproto"),
              AllOf(HasSubstr("old/problem.textproto:"),
                    HasSubstr("cannot parse the problem"),
                    HasSubstr("REFERENCE_OP_GATHER_LINEAR")));
}

TEST(ProblemRegistryTest, InvalidProblemNamesTheFile) {
  TempTree tree;
  tree.CopyShipped();
  fs::path file = tree.problems() / "gather_linear_fp32" / "problem.textproto";
  std::string text = ReadText(file);
  const std::string from = "atol: 1e-3";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "atol: 0");
  WriteText(file, text);
  // The message names the file and the line of the field at fault.
  const int line = [&] {
    std::istringstream in(text);
    std::string l;
    for (int n = 1; std::getline(in, l); ++n) {
      if (absl::StrContains(l, "tolerance {")) return n;
    }
    return 0;
  }();
  ASSERT_GT(line, 0);
  EXPECT_THAT(
      RefusedError(tree.problems(), "gather_linear_fp32/problem.textproto"),
      AllOf(HasSubstr(
                "gather_linear_fp32/problem.textproto:" + std::to_string(line) +
                ": problem 'gather_linear_fp32': tolerance"),
            HasSubstr("atol")));
}

TEST(ProblemRegistryTest, MissingExampleNamesTheFile) {
  TempTree tree;
  tree.CopyShipped();
  fs::remove(tree.examples() / "gather_linear_naive_bf16.cu");
  const absl::StatusOr<std::unique_ptr<ProblemRegistry>> registry =
      ProblemRegistry::LoadDir(tree.problems().string());
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_TRUE((*registry)->Find("gather_linear_fp32").ok());
  ASSERT_EQ((*registry)->refused().size(), 1u);
  EXPECT_THAT((*registry)->refused()[0].error,
              AllOf(HasSubstr("gather_linear_bf16/problem.textproto"),
                    HasSubstr("example_kernel "
                              "'../../examples/gather_linear_naive_bf16.cu': "
                              "not found")));
}

TEST(ProblemRegistryTest, BrokenExamplePlanNamesTheFile) {
  TempTree tree;
  tree.CopyShipped();
  WriteText(tree.examples() / "gather_linear_naive.cu",
            "// @kb launch gather_linear grid(B, cdiv(N, 256)) block(256)\n");
  EXPECT_THAT(
      RefusedError(tree.problems(), "gather_linear_fp32/problem.textproto"),
      AllOf(HasSubstr("gather_linear_fp32/problem.textproto"),
            HasSubstr("example kernel"), HasSubstr("uses 'N'")));
}

TEST(ProblemRegistryTest, DuplicateNameNamesBothFiles) {
  TempTree tree;
  tree.CopyShipped();
  fs::copy(tree.problems() / "gather_linear_fp32", tree.problems() / "z_copy");
  EXPECT_THAT(RefusedError(tree.problems(), "z_copy/problem.textproto"),
              AllOf(HasSubstr("z_copy/problem.textproto: problem name "
                              "'gather_linear_fp32' is already used by"),
                    HasSubstr("gather_linear_fp32/problem.textproto")));
}

TEST(ProblemRegistryTest, AFolderIsAProblemWithItsGoldenAndSuites) {
  TempTree tree;
  tree.CopyShipped();
  fs::copy(kRowMean, tree.problems() / "row_mean_fp32");
  absl::StatusOr<std::unique_ptr<ProblemRegistry>> registry =
      ProblemRegistry::LoadDir(tree.problems().string());
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_TRUE((*registry)->refused().empty());
  absl::StatusOr<const v1::Problem*> row_mean =
      (*registry)->Find("row_mean_fp32");
  ASSERT_TRUE(row_mean.ok()) << row_mean.status();
  EXPECT_EQ((*row_mean)->reference(), v1::REFERENCE_OP_GOLDEN_KERNEL);
  EXPECT_EQ((*row_mean)->golden().source(), ReadText(kRowMean / "golden.cu"));
  EXPECT_EQ((*row_mean)->example_source(), ReadText(kRowMean / "example.cu"));
  EXPECT_THAT((*registry)->Suites(),
              ::testing::ElementsAre("collectives", "core"));
  absl::StatusOr<std::vector<const v1::Problem*>> core =
      (*registry)->ListSuite("core");
  ASSERT_TRUE(core.ok());
  EXPECT_EQ(core->size(), 9u);  // The 8 shipped core problems, and this.
  bool listed = false;
  for (const v1::Problem* p : *core) listed |= p->name() == "row_mean_fp32";
  EXPECT_TRUE(listed);
  EXPECT_EQ((*registry)->ListSuite("collectives")->size(), 5u);
  absl::StatusOr<std::vector<const v1::Problem*>> none =
      (*registry)->ListSuite("nope");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(none.status().message(),
            "unknown suite 'nope'; known suites: collectives, core");
}

TEST(ProblemRegistryTest, ABrokenFolderIsRefusedAndTheOthersLoad) {
  TempTree tree;
  tree.CopyShipped();
  const fs::path row_mean = tree.problems() / "row_mean_fp32";
  fs::copy(kRowMean, row_mean);
  // A golden whose plan passes an argument the problem does not have.
  WriteText(row_mean / "golden.cu",
            "// @kb launch golden grid(R) block(1) args(x, out, N)\n"
            "extern \"C\" __global__ void golden() {}\n");
  EXPECT_THAT(RefusedError(tree.problems(), "row_mean_fp32/problem.textproto"),
              // The line of the golden field, then the plan's own line.
              AllOf(HasSubstr("row_mean_fp32/problem.textproto:17: problem "
                              "'row_mean_fp32': golden kernel 'golden.cu': "
                              "line 1:"),
                    HasSubstr("'N'")));
  // No golden file at all.
  fs::remove(row_mean / "golden.cu");
  EXPECT_THAT(RefusedError(tree.problems(), "row_mean_fp32/problem.textproto"),
              HasSubstr("golden.file 'golden.cu': not found"));
  // A folder without a problem file.
  fs::remove_all(row_mean);
  fs::create_directories(tree.problems() / "empty");
  EXPECT_THAT(RefusedError(tree.problems(), "empty/problem.textproto"),
              HasSubstr("cannot read"));
}

// An expert baseline's file is read and its plan checked as the
// baseline's are; a broken one refuses the problem, naming the file.
TEST(ProblemRegistryTest, ABrokenExpertBaselineIsRefused) {
  TempTree tree;
  tree.CopyShipped();
  const fs::path rms = tree.problems() / "rmsnorm_fp32";
  WriteText(rms / "expert.cu",
            "// @kb launch expert_rmsnorm_fused grid(R) block(256) "
            "args(x, gamma, y, R, N)\n"
            "extern \"C\" __global__ void expert_rmsnorm_fused() {}\n");
  EXPECT_THAT(RefusedError(tree.problems(), "rmsnorm_fp32/problem.textproto"),
              AllOf(HasSubstr("expert baseline kernel 'expert.cu': line 1:"),
                    HasSubstr("'N'")));
  // A step that is not the file's launch.
  WriteText(rms / "expert.cu",
            "// @kb launch other grid(R) block(256) args(x, gamma, y, R, C)\n"
            "extern \"C\" __global__ void other() {}\n");
  EXPECT_THAT(RefusedError(tree.problems(), "rmsnorm_fp32/problem.textproto"),
              HasSubstr("expert.steps[0]: launch 'expert_rmsnorm_fused' is "
                        "not the file's next `// @kb launch` line"));
  fs::remove(rms / "expert.cu");
  EXPECT_THAT(RefusedError(tree.problems(), "rmsnorm_fp32/problem.textproto"),
              HasSubstr("expert.file 'expert.cu': not found"));
}

TEST(ProblemRegistryTest, TheGoldenMatchesTheReferenceKind) {
  TempTree tree;
  tree.CopyShipped();
  const fs::path file = tree.problems() / "row_mean_fp32" / "problem.textproto";
  fs::copy(kRowMean, file.parent_path());
  std::string text = ReadText(file);
  const std::string golden = "golden { file: \"golden.cu\" }";
  ASSERT_NE(text.find(golden), std::string::npos);
  WriteText(file,
            std::string(text).replace(text.find(golden), golden.size(), ""));
  EXPECT_THAT(RefusedError(tree.problems(), "row_mean_fp32/problem.textproto"),
              HasSubstr("REFERENCE_OP_GOLDEN_KERNEL needs golden"));
  // Sources are the registry's to fill in.
  WriteText(file, std::string(text).replace(
                      text.find(golden), golden.size(),
                      "golden { file: \"golden.cu\" source: \"x\" }"));
  EXPECT_THAT(RefusedError(tree.problems(), "row_mean_fp32/problem.textproto"),
              HasSubstr("filled in by the registry"));
  // Suites are identifiers.
  WriteText(file, text + "\nsuites: [\"a b\"]\n");
  const int last_line =
      static_cast<int>(std::count(text.begin(), text.end(), '\n') + 2);
  EXPECT_THAT(
      RefusedError(tree.problems(), "row_mean_fp32/problem.textproto"),
      HasSubstr(absl::StrCat("row_mean_fp32/problem.textproto:", last_line,
                             ": problem 'row_mean_fp32': suites[1]: "
                             "'a b' is not an identifier")));
}

TEST(ProblemRegistryTest, OversizedFilesAreRefused) {
  TempTree tree;
  tree.CopyShipped();
  const fs::path row_mean = tree.problems() / "row_mean_fp32";
  fs::copy(kRowMean, row_mean);
  WriteText(row_mean / "golden.cu",
            ReadText(kRowMean / "golden.cu") +
                std::string(ProblemRegistry::kMaxKernelFileBytes, '/'));
  EXPECT_THAT(RefusedError(tree.problems(), "row_mean_fp32/problem.textproto"),
              HasSubstr("is larger than 262144 bytes"));
}

TEST(ProblemRegistryTest, TheCheckRefusesAProblem) {
  TempTree tree;
  tree.CopyShipped();
  ProblemRegistry::Options options;
  options.check = [](const v1::Problem& p) {
    return p.name() == "gather_linear_fp32"
               ? absl::InvalidArgumentError(
                     "example kernel 'k.cu' does not "
                     "compile")
               : absl::OkStatus();
  };
  EXPECT_EQ(
      RefusedError(tree.problems(), "gather_linear_fp32/problem.textproto",
                   options),
      "gather_linear_fp32/problem.textproto: example kernel 'k.cu' does not "
      "compile");
  // When every problem is refused, the load fails, saying why for each.
  options.check = [](const v1::Problem&) {
    return absl::InvalidArgumentError("no");
  };
  absl::StatusOr<std::unique_ptr<ProblemRegistry>> registry =
      ProblemRegistry::LoadDir(tree.problems().string(), options);
  EXPECT_EQ(registry.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(registry.status().message()),
              AllOf(HasSubstr("gather_linear_bf16/problem.textproto: no"),
                    HasSubstr("gather_linear_fp32/problem.textproto: no")));
}

TEST(ProblemRegistryTest, EmptyOrMissingDir) {
  TempTree tree;
  absl::StatusOr<std::unique_ptr<ProblemRegistry>> registry =
      ProblemRegistry::LoadDir(tree.problems().string());
  EXPECT_EQ(registry.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(registry.status().message()),
              HasSubstr("no problems in"));
  registry = ProblemRegistry::LoadDir((tree.problems() / "nope").string());
  EXPECT_EQ(registry.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(registry.status().message()),
              HasSubstr("does not exist"));
}

TEST(ProblemRegistryTest, FromProblems) {
  // A problem as a registry holds it: its files' text filled in.
  absl::StatusOr<std::unique_ptr<ProblemRegistry>> loaded =
      ProblemRegistry::LoadDir(kProblemsDir);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  v1::Problem problem = **(*loaded)->Find("gather_linear_fp32");
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
