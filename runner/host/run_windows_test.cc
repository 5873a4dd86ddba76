#include "runner/host/run_windows.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(RunWindowsTest, ARunSpansFromTheFirstRanksStartToTheLastRanksEnd) {
  // Two workloads alternating, one warm-up run each; rank 1 starts later
  // and ends later in run 2, earlier in run 3.
  const std::vector<int> order = {0, 1, 0, 1};
  const std::vector<std::vector<RunWindow>> by_rank = {
      {{0, 100}, {200, 300}, {1000, 3000}, {5000, 6000}},
      {{10, 90}, {210, 290}, {1500, 4000}, {5100, 5500}}};
  std::string why;
  const std::vector<std::vector<double>> spans =
      JoinRankWindowsUs(by_rank, order, 2, 1, &why);
  EXPECT_THAT(why, IsEmpty());
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_THAT(spans[0], ElementsAre(3.0));  // 1000 to 4000 ns.
  EXPECT_THAT(spans[1], ElementsAre(1.0));  // 5000 to 6000 ns.
  // With no warm-up dropped, every run counts.
  EXPECT_THAT(JoinRankWindowsUs(by_rank, order, 2, 0, &why)[0],
              ElementsAre(0.1, 3.0));
}

TEST(RunWindowsTest, RanksThatDoNotMatchTheScheduleGiveNoSpans) {
  std::string why;
  // Rank 1 has a run fewer than the schedule.
  std::vector<std::vector<double>> spans =
      JoinRankWindowsUs({{{0, 1}, {2, 3}}, {{0, 1}}}, {0, 0}, 1, 0, &why);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_THAT(spans[0], IsEmpty());
  EXPECT_THAT(why, HasSubstr("rank 1 has 1 runs"));
  // A workload the caller did not count.
  spans = JoinRankWindowsUs({{{0, 1}}}, {3}, 2, 0, &why);
  EXPECT_THAT(spans[0], IsEmpty());
  EXPECT_THAT(why, HasSubstr("workload 3"));
  // Only warm-up runs.
  spans = JoinRankWindowsUs({{{0, 1}, {2, 3}}}, {0, 1}, 2, 1, &why);
  EXPECT_THAT(spans[1], IsEmpty());
  EXPECT_THAT(why, HasSubstr("warm-up"));
  // Nothing at all.
  spans = JoinRankWindowsUs({}, {0}, 1, 0, &why);
  EXPECT_THAT(spans[0], IsEmpty());
  EXPECT_THAT(why, HasSubstr("no ranks"));
}

}  // namespace
}  // namespace kbench
