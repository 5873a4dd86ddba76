#include "runner/host/shape_plans.h"

#include <string>

#include "contract/launch_plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

v1::Problem TinyProblem() {
  v1::Problem p;
  p.set_name("tiny");
  p.add_dims()->set_name("B");
  p.add_dims()->set_name("K");
  return p;
}

v1::LaunchPlan Plan(const std::string& source) {
  absl::StatusOr<v1::LaunchPlan> plan = ParseLaunchPlan(source);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : v1::LaunchPlan();
}

TEST(ShapePlansTest, ResolvesAndChecksEachShapeOnce) {
  const v1::Problem problem = TinyProblem();
  absl::StatusOr<ParsedPlan> parsed =
      ParsedPlan::Create(Plan("// @kb launch k grid(B) block(K)\n"), problem);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ShapePlans plans(&*parsed, DefaultGpuSpec(), {{"k", 0}});
  absl::StatusOr<const ConcretePlan*> a = plans.At({{"B", 4}, {"K", 256}});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->launches[0].grid[0], 4);
  EXPECT_EQ((*a)->launches[0].block[0], 256);
  // The same dims again (another shape set's shape, or the timing shape):
  // the same plan, not a second resolution.
  absl::StatusOr<const ConcretePlan*> again = plans.At({{"B", 4}, {"K", 256}});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *a);
  EXPECT_EQ(plans.resolved(), 1);
  ASSERT_TRUE(plans.At({{"B", 7}, {"K", 32}}).ok());
  EXPECT_EQ(plans.resolved(), 2);
  EXPECT_EQ(*a, *plans.At({{"B", 4}, {"K", 256}}));  // Still valid.
}

TEST(ShapePlansTest, DeviceLimitsAndResolveErrorsAreKeptPerShape) {
  const v1::Problem problem = TinyProblem();
  absl::StatusOr<ParsedPlan> parsed = ParsedPlan::Create(
      Plan("// @kb launch k grid(B - 1) block(K) smem(1024)\n"), problem);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ShapePlans plans(&*parsed, DefaultGpuSpec(), {{"k", 232448}});
  absl::StatusOr<const ConcretePlan*> too_big =
      plans.At({{"B", 4}, {"K", 2048}});
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(too_big.status().message()),
              HasSubstr("this GPU (NVIDIA H100/H200 (sm_90 defaults)) allows "
                        "1024 per block"));
  EXPECT_EQ(plans.At({{"B", 4}, {"K", 2048}}).status(), too_big.status());
  absl::StatusOr<const ConcretePlan*> zero = plans.At({{"B", 1}, {"K", 32}});
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(std::string(zero.status().message()),
              HasSubstr("grid x = B - 1 is 0 at"));
  // Static smem counts: 1024 dynamic + 232448 static is over the opt-in.
  absl::StatusOr<const ConcretePlan*> smem = plans.At({{"B", 2}, {"K", 32}});
  ASSERT_FALSE(smem.ok());
  EXPECT_THAT(std::string(smem.status().message()), HasSubstr("static 232448"));
  EXPECT_EQ(plans.resolved(), 3);
}

}  // namespace
}  // namespace kbench
