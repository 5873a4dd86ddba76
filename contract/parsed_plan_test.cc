// ParsedPlan against the wrappers it replaced in the runner: the same
// validation errors as ValidateLaunchPlan and the same resolved plans and
// errors as ResolveLaunchPlan, at every shape of the shipped problems;
// JobPlan, the runner's check of the plan it receives; and the job
// defaults.
#include "contract/parsed_plan.h"

#include <cmath>
#include <string>

#include "contract/job_defaults.h"
#include "contract/launch_plan.h"
#include "contract/plan_fixtures.h"
#include "contract/problem_util.h"
#include "contract/runner_job.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::kbench::testing::LoadProblem;
using ::kbench::testing::MustParse;
using ::kbench::testing::ReadSource;
using ::testing::HasSubstr;

void ExpectSamePlan(const ConcretePlan& a, const ConcretePlan& b) {
  ASSERT_EQ(a.launches.size(), b.launches.size());
  for (size_t i = 0; i < a.launches.size(); ++i) {
    EXPECT_EQ(a.launches[i].entry, b.launches[i].entry);
    EXPECT_EQ(a.launches[i].grid, b.launches[i].grid);
    EXPECT_EQ(a.launches[i].block, b.launches[i].block);
    EXPECT_EQ(a.launches[i].smem_bytes, b.launches[i].smem_bytes);
    EXPECT_EQ(a.launches[i].args, b.launches[i].args);
    EXPECT_EQ(a.launches[i].line, b.launches[i].line);
  }
  ASSERT_EQ(a.workspaces.size(), b.workspaces.size());
  for (size_t i = 0; i < a.workspaces.size(); ++i) {
    EXPECT_EQ(a.workspaces[i].name, b.workspaces[i].name);
    EXPECT_EQ(a.workspaces[i].bytes, b.workspaces[i].bytes);
  }
}

TEST(ParsedPlanTest, ResolvesAsResolveLaunchPlanAtEveryShippedShape) {
  const v1::Problem fp32 = LoadProblem("gather_linear_fp32");
  for (const char* example : {"kernels/examples/gather_linear_naive.cu",
                              "kernels/examples/gather_linear_two_stage.cu"}) {
    const v1::LaunchPlan plan = MustParse(ReadSource(example));
    absl::StatusOr<ParsedPlan> parsed = ParsedPlan::Create(plan, fp32);
    ASSERT_TRUE(parsed.ok()) << example << ": " << parsed.status();
    int shapes = 0;
    for (const v1::ShapeSet& set : fp32.shape_sets()) {
      for (const v1::Shape& shape : set.shapes()) {
        absl::StatusOr<DimValues> dims = ShapeDims(fp32, shape);
        ASSERT_TRUE(dims.ok()) << dims.status();
        absl::StatusOr<ConcretePlan> once = parsed->Resolve(*dims);
        absl::StatusOr<ConcretePlan> each =
            ResolveLaunchPlan(plan, fp32, *dims);
        ASSERT_TRUE(once.ok()) << once.status();
        ASSERT_TRUE(each.ok()) << each.status();
        ExpectSamePlan(*once, *each);
        ++shapes;
      }
    }
    EXPECT_GT(shapes, 5) << example;
  }
}

TEST(ParsedPlanTest, CreateFailsAsValidateLaunchPlan) {
  const v1::Problem fp32 = LoadProblem("gather_linear_fp32");
  for (const char* source : {
           "// @kb problem gather_linear_bf16\n// @kb launch k grid(1) "
           "block(1)",
           "// @kb launch k grid(N) block(1)",
           "// @kb launch k grid(1) block(1) args(x, nope)",
           "// @kb workspace x bytes(4)\n// @kb launch k grid(1) block(1)",
           "// @kb workspace t bytes(4)\n// @kb workspace t bytes(8)\n"
           "// @kb launch k grid(1) block(1)",
           "// @kb launch k grid(1) block(1) smem(Q)",
       }) {
    const v1::LaunchPlan plan = MustParse(source);
    const absl::Status validated = ValidateLaunchPlan(plan, fp32);
    absl::StatusOr<ParsedPlan> parsed = ParsedPlan::Create(plan, fp32);
    ASSERT_FALSE(validated.ok()) << source;
    ASSERT_FALSE(parsed.ok()) << source;
    EXPECT_EQ(parsed.status(), validated) << source;
  }
  // A hand-made plan with an empty expression (the parser never makes one).
  v1::LaunchPlan plan;
  v1::LaunchSpec* l = plan.add_launches();
  l->set_entry("k");
  l->add_grid("");
  l->add_block("1");
  l->set_line(3);
  EXPECT_THAT(std::string(ParsedPlan::Create(plan, fp32).status().message()),
              HasSubstr("line 3: grid x is empty"));
}

TEST(ParsedPlanTest, ResolveErrorsNameLineAndShape) {
  const v1::Problem fp32 = LoadProblem("gather_linear_fp32");
  const v1::LaunchPlan plan =
      MustParse("// @kb launch k grid(K / (B - 12)) block(1)");
  absl::StatusOr<ParsedPlan> parsed = ParsedPlan::Create(plan, fp32);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const DimValues dims = {{"R", 4}, {"B", 12}, {"H", 32}, {"K", 56}};
  absl::StatusOr<ConcretePlan> resolved = parsed->Resolve(dims);
  ASSERT_FALSE(resolved.ok());
  EXPECT_EQ(resolved.status(), ResolveLaunchPlan(plan, fp32, dims).status());
  EXPECT_THAT(std::string(resolved.status().message()),
              HasSubstr("line 1: grid x = K / (B - 12) at R=4 B=12 H=32 "
                        "K=56: division by zero"));
  DimValues fine = dims;
  fine["B"] = 13;
  ASSERT_TRUE(parsed->Resolve(fine).ok());
  EXPECT_EQ(parsed->Resolve(fine)->launches[0].grid[0], 56);
}

TEST(ParsedPlanTest, KeepsItsOwnCopyOfThePlan) {
  const v1::Problem fp32 = LoadProblem("gather_linear_fp32");
  v1::LaunchPlan plan = MustParse("// @kb launch k grid(B) block(32)");
  absl::StatusOr<ParsedPlan> parsed = ParsedPlan::Create(plan, fp32);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  plan.mutable_launches(0)->set_entry("changed");
  EXPECT_EQ(parsed->plan().launches(0).entry(), "k");
  EXPECT_EQ(&parsed->problem(), &fp32);
}

// ---- JobPlan: the runner's check of the plan kbd sent.

v1::RunnerJob JobWith(const std::string& source) {
  v1::RunnerJob job;
  job.set_job_id("j-1");
  *job.mutable_problem() = LoadProblem("gather_linear_fp32");
  job.set_source(source);
  *job.mutable_plan() = MustParse(source);
  return job;
}

TEST(JobPlanTest, TakesTheJobsPlan) {
  const v1::RunnerJob job =
      JobWith(ReadSource("kernels/examples/gather_linear_two_stage.cu"));
  absl::StatusOr<ParsedPlan> parsed = JobPlan(job);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->plan().launches_size(), 2);
  EXPECT_EQ(&parsed->problem(), &job.problem());
}

TEST(JobPlanTest, NoPlanIsRefusedAsKbdsFaultNotTheKernels) {
  v1::RunnerJob job = JobWith("// @kb launch k grid(B) block(32)\n");
  job.clear_plan();
  absl::StatusOr<ParsedPlan> parsed = JobPlan(job);
  ASSERT_FALSE(parsed.ok());
  // Not InvalidArgument: the runner reports FailedPrecondition as `error`.
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(parsed.status().message()),
              HasSubstr("job j-1 carries no launch plan"));
  // The source's `// @kb` lines are not read instead.
  job.mutable_plan()->set_problem("gather_linear_fp32");
  EXPECT_EQ(JobPlan(job).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(JobPlanTest, AnOversizedPlanIsRefused) {
  v1::RunnerJob job = JobWith("// @kb launch k grid(B) block(32)\n");
  v1::LaunchSpec* l = job.mutable_plan()->mutable_launches(0);
  l->add_args(std::string(kMaxPlanBytes, 'a'));
  absl::StatusOr<ParsedPlan> parsed = JobPlan(job);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(parsed.status().message()),
              HasSubstr("the runner takes at most 262144"));
}

TEST(JobPlanTest, APlanThatDoesNotFitTheProblemIsInvalid) {
  v1::RunnerJob job = JobWith("// @kb launch k grid(B) block(32)\n");
  job.mutable_plan()->mutable_launches(0)->set_block(0, "T");
  absl::StatusOr<ParsedPlan> parsed = JobPlan(job);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(parsed.status().message()),
              HasSubstr("line 1: block x 'T' uses 'T', which is not a dim"));
  job = JobWith("// @kb launch k grid(B) block(32)\n");
  job.mutable_plan()->mutable_launches(0)->clear_grid();
  EXPECT_THAT(std::string(JobPlan(job).status().message()),
              HasSubstr("grid() takes 1 to 3 expressions, got 0"));
}

// ---- The job defaults.

TEST(JobDefaultsTest, StoppingCriterionDefaultsFillUnsetFields) {
  const v1::StoppingCriterion d = DefaultStoppingCriterion();
  EXPECT_EQ(d.max_rel_stderr(), 0.005);
  EXPECT_EQ(d.min_samples(), 20);
  EXPECT_EQ(d.max_time_ms(), 1000);
  v1::StoppingCriterion c = WithStoppingDefaults(v1::StoppingCriterion());
  EXPECT_EQ(c.SerializeAsString(), d.SerializeAsString());
  v1::StoppingCriterion set;
  set.set_max_rel_stderr(0.01);
  set.set_min_samples(-3);
  set.set_max_time_ms(250);
  c = WithStoppingDefaults(set);
  EXPECT_EQ(c.max_rel_stderr(), 0.01);
  EXPECT_EQ(c.min_samples(), 20);
  EXPECT_EQ(c.max_time_ms(), 250);
  set.set_max_rel_stderr(std::nan(""));
  EXPECT_EQ(WithStoppingDefaults(set).max_rel_stderr(), 0.005);
  EXPECT_STREQ(kDefaultKernelFileName, "kernel.cu");
}

}  // namespace
}  // namespace kbench
