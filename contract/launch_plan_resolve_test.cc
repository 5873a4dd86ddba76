// ResolveLaunchPlan (the plan at a shape, errors that name the line and
// the shape), CheckDeviceLimits and DefaultGpuSpec.
#include <array>
#include <string>

#include "contract/launch_plan.h"
#include "contract/plan_fixtures.h"
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

const DimValues& kDefault = ::kbench::testing::DefaultDims();

// ---- ResolveLaunchPlan.

class ResolveLaunchPlanTest : public ::testing::Test {
 protected:
  v1::Problem fp32_ = LoadProblem("gather_linear_fp32");
  v1::LaunchPlan naive_ =
      MustParse(ReadSource("kernels/examples/gather_linear_naive.cu"));
  v1::LaunchPlan two_stage_ =
      MustParse(ReadSource("kernels/examples/gather_linear_two_stage.cu"));
};

TEST_F(ResolveLaunchPlanTest, NaiveDefaultShape) {
  absl::StatusOr<ConcretePlan> plan =
      ResolveLaunchPlan(naive_, fp32_, kDefault);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->launches.size(), 1u);
  const ConcreteLaunch& l = plan->launches[0];
  EXPECT_EQ(l.entry, "gather_linear");
  EXPECT_THAT(l.grid, ElementsAre(12, 1, 1));
  EXPECT_THAT(l.block, ElementsAre(256, 1, 1));
  EXPECT_EQ(l.smem_bytes, 0);
  EXPECT_EQ(l.line, 5);
  EXPECT_THAT(l.args, ElementsAre("x", "w", "bias", "out", "R", "B", "H", "K"));
  EXPECT_TRUE(plan->workspaces.empty());
}

TEST_F(ResolveLaunchPlanTest, NaiveK1000) {
  DimValues dims = kDefault;
  dims["K"] = 1000;
  absl::StatusOr<ConcretePlan> plan = ResolveLaunchPlan(naive_, fp32_, dims);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->launches[0].grid, ElementsAre(12, 4, 1));
}

TEST_F(ResolveLaunchPlanTest, TwoStage) {
  absl::StatusOr<ConcretePlan> plan =
      ResolveLaunchPlan(two_stage_, fp32_, kDefault);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->workspaces.size(), 1u);
  EXPECT_EQ(plan->workspaces[0].name, "gathered");
  EXPECT_EQ(plan->workspaces[0].bytes, 12 * 4 * 32 * 4);
  ASSERT_EQ(plan->launches.size(), 2u);
  EXPECT_THAT(plan->launches[0].grid, ElementsAre(12, 4, 1));
  EXPECT_THAT(plan->launches[0].block, ElementsAre(32, 1, 1));
  EXPECT_THAT(plan->launches[0].args,
              ElementsAre("x", "gathered", "R", "B", "H"));
  EXPECT_THAT(plan->launches[1].grid, ElementsAre(12, 7, 1));
}

TEST_F(ResolveLaunchPlanTest, DefaultArgsAppendWorkspaces) {
  v1::LaunchPlan plan = MustParse(
      "// @kb workspace a bytes(8)\n// @kb workspace b bytes(K)\n"
      "// @kb launch k grid(1) block(1) smem(K * 4)\n");
  absl::StatusOr<ConcretePlan> resolved =
      ResolveLaunchPlan(plan, fp32_, kDefault);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_THAT(
      resolved->launches[0].args,
      ElementsAre("x", "w", "bias", "out", "R", "B", "H", "K", "a", "b"));
  EXPECT_EQ(resolved->launches[0].smem_bytes, 224);
  EXPECT_EQ(resolved->workspaces[1].bytes, 56);
}

TEST_F(ResolveLaunchPlanTest, ErrorsNameLineAndShape) {
  struct Case {
    std::string source;
    std::string want;
  };
  const Case cases[] = {
      {"// @kb launch k grid(B, K - 56) block(1)",
       "line 1: grid y = K - 56 is 0 at R=4 B=12 H=32 K=56 (launch k); grid "
       "and block extents must be >= 1"},
      {"\n// @kb launch k grid(1) block(32, H - 40)",
       "line 2: block y = H - 40 is -8 at R=4 B=12 H=32 K=56"},
      {"// @kb launch k grid(1) block(1) smem(K - 100)",
       "line 1: smem(K - 100) is -44 at R=4 B=12 H=32 K=56"},
      {"// @kb workspace t bytes(B - 13)\n// @kb launch k grid(1) block(1)",
       "line 1: workspace t bytes(B - 13) is -1 at R=4 B=12 H=32 K=56"},
      {"// @kb launch k grid(K / (B - 12)) block(1)",
       "line 1: grid x = K / (B - 12) at R=4 B=12 H=32 K=56: division by "
       "zero"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ConcretePlan> plan =
        ResolveLaunchPlan(MustParse(c.source), fp32_, kDefault);
    ASSERT_FALSE(plan.ok()) << c.source;
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(plan.status().message()), HasSubstr(c.want))
        << c.source;
  }
  // Invalid plans are rejected before evaluation.
  absl::StatusOr<ConcretePlan> plan = ResolveLaunchPlan(
      MustParse("// @kb launch k grid(N) block(1)"), fp32_, kDefault);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("uses 'N'"));
}

// ---- CheckDeviceLimits and DefaultGpuSpec.

ConcretePlan OneLaunch(std::array<int64_t, 3> grid,
                       std::array<int64_t, 3> block, int64_t smem) {
  ConcretePlan plan;
  ConcreteLaunch l;
  l.entry = "k";
  l.grid = grid;
  l.block = block;
  l.smem_bytes = smem;
  l.line = 7;
  l.args = {"x"};
  plan.launches.push_back(l);
  return plan;
}

TEST(CheckDeviceLimitsTest, WithinLimits) {
  const v1::GpuSpec spec = DefaultGpuSpec();
  EXPECT_TRUE(
      CheckDeviceLimits(
          OneLaunch({2147483647, 65535, 65535}, {1024, 1, 1}, 232448), spec)
          .ok());
  EXPECT_TRUE(
      CheckDeviceLimits(OneLaunch({1, 1, 1}, {16, 16, 4}, 0), spec).ok());
  // An empty spec checks nothing.
  EXPECT_TRUE(
      CheckDeviceLimits(OneLaunch({1 << 30, 1 << 30, 1}, {4096, 1, 1}, 1 << 30),
                        v1::GpuSpec())
          .ok());
}

TEST(CheckDeviceLimitsTest, TooManyThreads) {
  absl::Status status = CheckDeviceLimits(OneLaunch({1, 1, 1}, {2048, 1, 1}, 0),
                                          DefaultGpuSpec());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              AllOf(HasSubstr("line 7"),
                    HasSubstr("block(2048, 1, 1) has "
                              "2048 threads"),
                    HasSubstr("allows 1024 per block")));
}

TEST(CheckDeviceLimitsTest, BlockZTooLarge) {
  absl::Status status =
      CheckDeviceLimits(OneLaunch({1, 1, 1}, {1, 1, 128}, 0), DefaultGpuSpec());
  EXPECT_THAT(std::string(status.message()),
              AllOf(HasSubstr("line 7"), HasSubstr("block z = 128"),
                    HasSubstr("limit of 64")));
}

TEST(CheckDeviceLimitsTest, GridYTooLarge) {
  absl::Status status = CheckDeviceLimits(
      OneLaunch({1, 70000, 1}, {256, 1, 1}, 0), DefaultGpuSpec());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              AllOf(HasSubstr("line 7"), HasSubstr("grid y = 70000"),
                    HasSubstr("limit of 65535")));
}

TEST(CheckDeviceLimitsTest, SharedMemory) {
  absl::Status status = CheckDeviceLimits(
      OneLaunch({1, 1, 1}, {256, 1, 1}, 300000), DefaultGpuSpec());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              AllOf(HasSubstr("line 7"), HasSubstr("300000 bytes"),
                    HasSubstr("at most 232448")));
  // Static shared memory counts too.
  status = CheckDeviceLimits(OneLaunch({1, 1, 1}, {256, 1, 1}, 200000),
                             DefaultGpuSpec(), {{"k", 40000}});
  EXPECT_THAT(std::string(status.message()),
              AllOf(HasSubstr("240000 bytes"), HasSubstr("dynamic smem 200000"),
                    HasSubstr("static 40000")));
  EXPECT_TRUE(CheckDeviceLimits(OneLaunch({1, 1, 1}, {256, 1, 1}, 200000),
                                DefaultGpuSpec(), {{"other", 40000}})
                  .ok());
}

TEST(DefaultGpuSpecTest, HopperLimits) {
  const v1::GpuSpec spec = DefaultGpuSpec();
  EXPECT_EQ(spec.name(), "NVIDIA H100/H200 (sm_90 defaults)");
  EXPECT_EQ(spec.arch(), "sm_90");
  EXPECT_EQ(spec.cc_major(), 9);
  EXPECT_EQ(spec.cc_minor(), 0);
  EXPECT_EQ(spec.sm_count(), 132);
  EXPECT_EQ(spec.warp_size(), 32);
  EXPECT_EQ(spec.max_threads_per_block(), 1024);
  EXPECT_THAT(spec.max_block_dims(), ElementsAre(1024, 1024, 64));
  EXPECT_THAT(spec.max_grid_dims(), ElementsAre(2147483647, 65535, 65535));
  EXPECT_EQ(spec.smem_per_block_bytes(), 49152);
  EXPECT_EQ(spec.smem_per_block_optin_bytes(), 232448);
  EXPECT_EQ(spec.reserved_smem_per_block_bytes(), 1024);
  EXPECT_EQ(spec.smem_per_sm_bytes(), 233472);
  EXPECT_EQ(spec.regs_per_sm(), 65536);
  EXPECT_EQ(spec.regs_per_block(), 65536);
  EXPECT_EQ(spec.max_threads_per_sm(), 2048);
  EXPECT_EQ(spec.max_blocks_per_sm(), 32);
  EXPECT_EQ(spec.l2_bytes(), 52428800);
}

}  // namespace
}  // namespace kbench
