#include "contract/launch_plan.h"

#include <string>

#include "contract/plan_fixtures.h"
#include "contract/problem_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::kbench::testing::LoadProblem;
using ::kbench::testing::MustParse;
using ::kbench::testing::ReadSource;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ParseError(const std::string& source) {
  absl::StatusOr<v1::LaunchPlan> plan = ParseLaunchPlan(source);
  EXPECT_FALSE(plan.ok()) << source;
  if (plan.ok()) return "";
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(plan.status().message());
}

std::string ValidateError(const std::string& source,
                          const v1::Problem& problem) {
  v1::LaunchPlan plan = MustParse(source);
  absl::Status status = ValidateLaunchPlan(plan, problem);
  EXPECT_FALSE(status.ok()) << source;
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  return std::string(status.message());
}

// ---- ParseLaunchPlan on the shipped examples.

TEST(ParseLaunchPlanTest, NaiveExample) {
  v1::LaunchPlan plan =
      MustParse(ReadSource("kernels/examples/gather_linear_naive.cu"));
  EXPECT_EQ(plan.problem(), "gather_linear_fp32");
  ASSERT_EQ(plan.launches_size(), 1);
  const v1::LaunchSpec& l = plan.launches(0);
  EXPECT_EQ(l.entry(), "gather_linear");
  EXPECT_THAT(l.grid(), ElementsAre("B", "cdiv(K, 256)"));
  EXPECT_THAT(l.block(), ElementsAre("256"));
  EXPECT_EQ(l.smem(), "");
  EXPECT_TRUE(l.args().empty());
  EXPECT_EQ(l.line(), 5);
  EXPECT_TRUE(plan.workspaces().empty());
}

TEST(ParseLaunchPlanTest, NaiveBf16Example) {
  v1::LaunchPlan plan =
      MustParse(ReadSource("kernels/examples/gather_linear_naive_bf16.cu"));
  EXPECT_EQ(plan.problem(), "gather_linear_bf16");
  ASSERT_EQ(plan.launches_size(), 1);
  EXPECT_EQ(plan.launches(0).entry(), "gather_linear");
  EXPECT_EQ(plan.launches(0).line(), 5);
}

TEST(ParseLaunchPlanTest, TwoStageExample) {
  v1::LaunchPlan plan =
      MustParse(ReadSource("kernels/examples/gather_linear_two_stage.cu"));
  EXPECT_EQ(plan.problem(), "gather_linear_fp32");
  ASSERT_EQ(plan.workspaces_size(), 1);
  EXPECT_EQ(plan.workspaces(0).name(), "gathered");
  EXPECT_EQ(plan.workspaces(0).bytes(), "B * R * H * 4");
  EXPECT_EQ(plan.workspaces(0).line(), 6);
  ASSERT_EQ(plan.launches_size(), 2);
  const v1::LaunchSpec& a = plan.launches(0);
  EXPECT_EQ(a.entry(), "gather_rows");
  EXPECT_THAT(a.grid(), ElementsAre("B", "R"));
  EXPECT_THAT(a.block(), ElementsAre("min(H, 256)"));
  EXPECT_THAT(a.args(), ElementsAre("x", "gathered", "R", "B", "H"));
  EXPECT_EQ(a.line(), 7);
  const v1::LaunchSpec& b = plan.launches(1);
  EXPECT_EQ(b.entry(), "linear_rows");
  EXPECT_THAT(b.grid(), ElementsAre("B", "cdiv(K, 8)"));
  EXPECT_THAT(b.block(), ElementsAre("256"));
  EXPECT_THAT(b.args(),
              ElementsAre("gathered", "w", "bias", "out", "R", "B", "H", "K"));
  EXPECT_EQ(b.line(), 8);
}

TEST(ParseLaunchPlanTest, ClausesInAnyOrderAndSpacing) {
  v1::LaunchPlan plan = MustParse(
      "int a;\r\n"
      "   //@kb launch k smem( 4 * max(K, 2) ) block(32, 4, 2)   "
      "grid (cdiv(K, 32), B, 1) args(x,out ,K)\r\n"
      "// @kbnote this is some other tag\n"
      "/* // @kb launch ignored grid(1) block(1) is not at the start */\n"
      "int b; // @kb launch ignored2 grid(1) block(1)\n");
  ASSERT_EQ(plan.launches_size(), 1);
  const v1::LaunchSpec& l = plan.launches(0);
  EXPECT_EQ(l.entry(), "k");
  EXPECT_EQ(l.line(), 2);
  EXPECT_THAT(l.grid(), ElementsAre("cdiv(K, 32)", "B", "1"));
  EXPECT_THAT(l.block(), ElementsAre("32", "4", "2"));
  EXPECT_EQ(l.smem(), "4 * max(K, 2)");
  EXPECT_THAT(l.args(), ElementsAre("x", "out", "K"));
  EXPECT_EQ(plan.problem(), "");
}

TEST(ParseLaunchPlanTest, LaunchesKeepTheirOrder) {
  v1::LaunchPlan plan = MustParse(
      "// @kb launch first grid(1) block(1)\n"
      "// @kb launch second grid(2) block(2)\n"
      "// @kb launch first grid(3) block(3)\n");
  ASSERT_EQ(plan.launches_size(), 3);
  EXPECT_EQ(plan.launches(0).entry(), "first");
  EXPECT_EQ(plan.launches(1).entry(), "second");
  EXPECT_EQ(plan.launches(2).entry(), "first");
  EXPECT_EQ(plan.launches(2).line(), 3);
}

// The multi-launch example of docs/kernel-contract.md.
TEST(ParseLaunchPlanTest, ContractMultiLaunchExample) {
  const v1::LaunchPlan plan = MustParse(
      "// @kb problem gather_linear_fp32\n"
      "// @kb workspace partial bytes(B * K * 4 * 4)\n"
      "// @kb launch partial_dot grid(B, cdiv(K, 128), 4) block(128) "
      "args(x, w, partial, R, B, H, K)\n"
      "// @kb launch finish grid(B) block(min(K, 1024)) "
      "args(partial, bias, out, B, K)\n");
  const v1::Problem problem = LoadProblem("gather_linear_fp32");
  absl::StatusOr<ConcretePlan> resolved = ResolveLaunchPlan(
      plan, problem, {{"R", 4}, {"B", 12}, {"H", 32}, {"K", 1000}});
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->workspaces[0].bytes, 12 * 1000 * 16);
  EXPECT_THAT(resolved->launches[0].grid, ElementsAre(12, 8, 4));
  EXPECT_THAT(resolved->launches[1].block, ElementsAre(1000, 1, 1));
  EXPECT_THAT(resolved->launches[1].args,
              ElementsAre("partial", "bias", "out", "B", "K"));
  EXPECT_TRUE(CheckDeviceLimits(*resolved, DefaultGpuSpec()).ok());
}

// ---- ParseLaunchPlan errors.

TEST(ParseLaunchPlanTest, NoLaunchLineShowsAnExample) {
  EXPECT_THAT(
      ParseError("// @kb problem gather_linear_fp32\n__global__ void f() {}\n"),
      HasSubstr("`// @kb launch gather_linear grid(B, cdiv(K, 256)) "
                "block(256)`"));
  EXPECT_THAT(ParseError(""), HasSubstr("no kernel launch"));
}

TEST(ParseLaunchPlanTest, UnknownDirective) {
  EXPECT_THAT(ParseError("\n\n// @kb lunch k grid(1) block(1)\n"),
              HasSubstr("line 3: unknown @kb directive 'lunch'; expected "
                        "launch, workspace or problem"));
  EXPECT_THAT(ParseError("// @kb\n"), HasSubstr("line 1: empty @kb directive"));
}

TEST(ParseLaunchPlanTest, LaunchErrors) {
  struct Case {
    std::string line;
    std::string want;
  };
  const Case cases[] = {
      {"// @kb launch", "line 1: @kb launch needs a kernel name"},
      {"// @kb launch 9k grid(1) block(1)", "got '9k'"},
      {"// @kb launch k grid(1)", "line 1: @kb launch k has no block()"},
      {"// @kb launch k block(1)", "has no grid()"},
      {"// @kb launch k grid(1, 2, 3, 4) block(1)",
       "line 1: grid() takes 1 to 3 expressions, got 4"},
      {"// @kb launch k grid() block(1)",
       "grid() takes 1 to 3 expressions, "
       "got 0"},
      {"// @kb launch k grid(1) block(1, 2, 3, 4)",
       "block() takes 1 to 3 expressions, got 4"},
      {"// @kb launch k grid(1,,2) block(1)", "grid() expression 2 is empty"},
      {"// @kb launch k grid(1) block(1) grid(2)",
       "grid() appears more than once"},
      {"// @kb launch k grid(1) block(1) smem(1) smem(2)",
       "smem() appears more than once"},
      {"// @kb launch k grid(1) block(1) smem(1, 2)",
       "smem() takes exactly 1 expression, got 2"},
      {"// @kb launch k grid(1) block(1) smem()",
       "smem() takes exactly 1 expression, got 0"},
      {"// @kb launch k grid(1) block(1) stream(0)",
       "unknown clause 'stream(...)' in @kb launch; expected grid(), "
       "block(), smem() or args()"},
      {"// @kb launch k grid(1) block(1) extra",
       "expected a clause such as grid(...) in @kb launch but found 'extra'"},
      {"// @kb launch k grid(cdiv(K, 2) block(1)",
       "grid(...) has no closing ')'"},
      {"// @kb launch k grid(K +) block(1)",
       "line 1: grid(): unexpected end of expression at column 4 in 'K +'"},
      {"// @kb launch k grid(1) block(1) args()", "args() lists no names"},
      {"// @kb launch k grid(1) block(1) args(x, 2*B)", "'2*B' is not a name"},
      {"// @kb launch k grid(1) block(1) args(x) args(out)",
       "args() appears more than once"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(ParseError(c.line), HasSubstr(c.want)) << c.line;
  }
}

TEST(ParseLaunchPlanTest, WorkspaceErrors) {
  const std::string launch = "\n// @kb launch k grid(1) block(1)\n";
  EXPECT_THAT(ParseError("// @kb workspace" + launch),
              HasSubstr("line 1: @kb workspace needs a name"));
  EXPECT_THAT(ParseError("// @kb workspace tmp" + launch),
              HasSubstr("line 1: @kb workspace tmp has no bytes()"));
  EXPECT_THAT(ParseError("// @kb workspace tmp size(4)" + launch),
              HasSubstr("unknown clause 'size(...)' in @kb workspace; "
                        "expected bytes()"));
  EXPECT_THAT(ParseError("// @kb workspace tmp bytes(4) bytes(8)" + launch),
              HasSubstr("bytes() appears more than once"));
  EXPECT_THAT(ParseError("// @kb workspace tmp bytes(4 *)" + launch),
              HasSubstr("bytes(): unexpected end of expression"));
}

TEST(ParseLaunchPlanTest, ProblemErrors) {
  const std::string launch = "\n// @kb launch k grid(1) block(1)\n";
  EXPECT_THAT(ParseError("// @kb problem" + launch),
              HasSubstr("line 1: @kb problem takes exactly one problem name"));
  EXPECT_THAT(ParseError("// @kb problem a b" + launch),
              HasSubstr("takes exactly one problem name"));
  EXPECT_THAT(
      ParseError("// @kb problem a\n// @kb problem b" + launch),
      HasSubstr("line 2: second @kb problem line; the first is on line 1"));
}

// ---- ValidateLaunchPlan.

class ValidateLaunchPlanTest : public ::testing::Test {
 protected:
  v1::Problem fp32_ = LoadProblem("gather_linear_fp32");
};

TEST_F(ValidateLaunchPlanTest, ExamplesAreValid) {
  for (const char* file :
       {"gather_linear_naive.cu", "gather_linear_two_stage.cu"}) {
    v1::LaunchPlan plan =
        MustParse(ReadSource(std::string("kernels/examples/") + file));
    EXPECT_TRUE(ValidateLaunchPlan(plan, fp32_).ok()) << file;
  }
  v1::Problem bf16 = LoadProblem("gather_linear_bf16");
  v1::LaunchPlan plan =
      MustParse(ReadSource("kernels/examples/gather_linear_naive_bf16.cu"));
  EXPECT_TRUE(ValidateLaunchPlan(plan, bf16).ok());
}

TEST_F(ValidateLaunchPlanTest, ProblemMismatch) {
  EXPECT_THAT(ValidateError("// @kb problem gather_linear_bf16\n"
                            "// @kb launch k grid(1) block(1)",
                            fp32_),
              AllOf(HasSubstr("`// @kb problem gather_linear_bf16`"),
                    HasSubstr("run as problem gather_linear_fp32")));
}

TEST_F(ValidateLaunchPlanTest, UnknownDimInExpressions) {
  EXPECT_THAT(
      ValidateError("// @kb launch k grid(B, cdiv(N, 256)) block(256)", fp32_),
      AllOf(HasSubstr("line 1: grid y 'cdiv(N, 256)' uses 'N'"),
            HasSubstr("dims R, B, H, K")));
  EXPECT_THAT(ValidateError("\n// @kb launch k grid(1) block(T)", fp32_),
              HasSubstr("line 2: block x 'T' uses 'T'"));
  EXPECT_THAT(
      ValidateError("// @kb launch k grid(1) block(1) smem(S * 4)", fp32_),
      HasSubstr("smem() 'S * 4' uses 'S'"));
  EXPECT_THAT(ValidateError("// @kb workspace t bytes(M)\n"
                            "// @kb launch k grid(1) block(1)",
                            fp32_),
              HasSubstr("line 1: workspace t bytes() 'M' uses 'M'"));
  // A workspace is not a dim.
  EXPECT_THAT(ValidateError("// @kb workspace t bytes(4)\n"
                            "// @kb launch k grid(t) block(1)",
                            fp32_),
              HasSubstr("uses 't', which is not a dim"));
}

TEST_F(ValidateLaunchPlanTest, UnknownArg) {
  EXPECT_THAT(
      ValidateError("// @kb workspace tmp bytes(4)\n"
                    "// @kb launch k grid(1) block(1) args(x, y, out)",
                    fp32_),
      AllOf(HasSubstr("line 2: args() names 'y', which is not a tensor, dim "
                      "or workspace"),
            HasSubstr("x, w, bias, out, R, B, H, K, tmp")));
  EXPECT_TRUE(ValidateLaunchPlan(
                  MustParse("// @kb workspace tmp bytes(4)\n"
                            "// @kb launch k grid(1) block(1) args(tmp, K, x)"),
                  fp32_)
                  .ok());
}

TEST_F(ValidateLaunchPlanTest, WorkspaceNames) {
  EXPECT_THAT(ValidateError("// @kb workspace t bytes(4)\n"
                            "// @kb workspace t bytes(8)\n"
                            "// @kb launch k grid(1) block(1)",
                            fp32_),
              HasSubstr("line 2: workspace 't' is already declared on line 1"));
  EXPECT_THAT(ValidateError("// @kb workspace out bytes(4)\n"
                            "// @kb launch k grid(1) block(1)",
                            fp32_),
              HasSubstr("line 1: workspace 'out' has the name of a tensor"));
  EXPECT_THAT(ValidateError("// @kb workspace K bytes(4)\n"
                            "// @kb launch k grid(1) block(1)",
                            fp32_),
              HasSubstr("workspace 'K' has the name of a dim"));
}

TEST_F(ValidateLaunchPlanTest, HandBuiltPlans) {
  v1::LaunchPlan plan;
  EXPECT_THAT(std::string(ValidateLaunchPlan(plan, fp32_).message()),
              HasSubstr("no launches"));
  v1::LaunchSpec* l = plan.add_launches();
  l->set_entry("k");
  l->set_line(3);
  l->add_block("1");
  EXPECT_THAT(std::string(ValidateLaunchPlan(plan, fp32_).message()),
              HasSubstr("line 3: grid() takes 1 to 3 expressions, got 0"));
  l->add_grid("");
  EXPECT_THAT(std::string(ValidateLaunchPlan(plan, fp32_).message()),
              HasSubstr("line 3: grid x is empty"));
  l->set_grid(0, "(B");
  EXPECT_THAT(std::string(ValidateLaunchPlan(plan, fp32_).message()),
              HasSubstr("line 3: grid x: expected ')'"));
  l->set_grid(0, "B");
  l->set_entry("bad name");
  EXPECT_THAT(std::string(ValidateLaunchPlan(plan, fp32_).message()),
              HasSubstr("kernel name 'bad name' is not a C identifier"));
  l->set_entry("k");
  EXPECT_TRUE(ValidateLaunchPlan(plan, fp32_).ok());
}

// ---- CheckEntryPoints.

TEST(CheckEntryPointsTest, AllPresent) {
  v1::LaunchPlan plan =
      MustParse(ReadSource("kernels/examples/gather_linear_two_stage.cu"));
  EXPECT_TRUE(CheckEntryPoints(plan, {"linear_rows", "gather_rows"}).ok());
}

TEST(CheckEntryPointsTest, MangledNameGetsExternCHint) {
  v1::LaunchPlan plan =
      MustParse(ReadSource("kernels/examples/gather_linear_naive.cu"));
  absl::Status status =
      CheckEntryPoints(plan, {"_Z13gather_linearPKfS0_S0_Pfiiii"});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      std::string(status.message()),
      AllOf(HasSubstr("line 5:"), HasSubstr("_Z13gather_linearPKfS0_S0_Pfiiii"),
            HasSubstr("extern \"C\"")));
}

TEST(CheckEntryPointsTest, MissingKernelListsFound) {
  v1::LaunchPlan plan =
      MustParse(ReadSource("kernels/examples/gather_linear_two_stage.cu"));
  absl::Status status = CheckEntryPoints(plan, {"gather_rows", "linear_row"});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              AllOf(HasSubstr("line 8:"), HasSubstr("'linear_rows'"),
                    HasSubstr("kernels found: gather_rows, linear_row")));
  // A longer mangled name that only contains the entry is no match.
  status = CheckEntryPoints(MustParse("// @kb launch gather grid(1) block(1)"),
                            {"_Z13gather_linearv"});
  EXPECT_THAT(std::string(status.message()),
              AllOf(HasSubstr("defines no extern \"C\" __global__ function"),
                    HasSubstr("_Z13gather_linearv")));
  status = CheckEntryPoints(MustParse("// @kb launch g grid(1) block(1)"), {});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("kernels found: (none)"));
}

}  // namespace
}  // namespace kbench
