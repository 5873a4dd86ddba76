// Tests of IdlePool (server/core/idle_pool.h): one-GPU takes, gang
// placement on one host, and holds against starvation.
#include "server/core/idle_pool.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::testing::ElementsAre;
using ::testing::Optional;

IdlePool::Idle W(int64_t id, const std::string& host, int gpu,
                 const std::string& arch = "sm_90") {
  return {id, arch, host, gpu};
}

TEST(IdlePoolTest, OneGpuJobTakesTheLongestWaitingWorkerOfItsArch) {
  IdlePool pool({W(1, "hA", 0, "sm_80"), W(2, "hA", 1), W(3, "", 0)});
  EXPECT_THAT(pool.TakeOne("sm_90"), Optional(2));
  EXPECT_THAT(pool.TakeOne("sm_90"), Optional(3));  // No host id: fine alone.
  EXPECT_EQ(pool.TakeOne("sm_90"), std::nullopt);
  EXPECT_THAT(pool.TakeOne("sm_80"), Optional(1));
  EXPECT_TRUE(pool.Empty());
}

TEST(IdlePoolTest, GangTakesLowestGpuIndicesOfOneHostLeaderFirst) {
  IdlePool pool({W(1, "hA", 3), W(2, "hB", 0), W(3, "hA", 1), W(4, "hA", 2)});
  // hA has three idle; hB one. Rank 0 is the lowest GPU index.
  EXPECT_THAT(pool.TakeGang("sm_90", 2), Optional(ElementsAre(3, 4)));
  EXPECT_EQ(pool.TakeGang("sm_90", 2), std::nullopt);  // hA: 1, hB: 1.
  EXPECT_THAT(pool.TakeOne("sm_90"), Optional(1));
}

TEST(IdlePoolTest, GangNeverSpansHostsArchsOrWorkersWithoutAHostId) {
  IdlePool pool({W(1, "hA", 0), W(2, "hB", 1), W(3, "", 0), W(4, "", 1),
                 W(5, "hA", 1, "sm_80")});
  EXPECT_EQ(pool.TakeGang("sm_90", 2), std::nullopt);
  EXPECT_EQ(pool.TakeGang("sm_80", 2), std::nullopt);
}

TEST(IdlePoolTest, TwoWorkerIdsOnOneGpuCountOnce) {
  // Two kbworkers left at --gpu 0 under different ids: one GPU, not two.
  IdlePool pool({W(1, "hA", 0), W(2, "hA", 0)});
  EXPECT_EQ(pool.TakeGang("sm_90", 2), std::nullopt);
  IdlePool three({W(1, "hA", 0), W(2, "hA", 0), W(3, "hA", 1)});
  EXPECT_THAT(three.TakeGang("sm_90", 2), Optional(ElementsAre(1, 3)));
}

TEST(IdlePoolTest, GangGoesToTheSmallestHostItFits) {
  IdlePool pool({W(1, "hBig", 0), W(2, "hBig", 1), W(3, "hBig", 2),
                 W(4, "hBig", 3), W(5, "hSmall", 0), W(6, "hSmall", 1)});
  EXPECT_THAT(pool.TakeGang("sm_90", 2), Optional(ElementsAre(5, 6)));
  EXPECT_THAT(pool.TakeGang("sm_90", 4), Optional(ElementsAre(1, 2, 3, 4)));
}

TEST(IdlePoolTest, HoldKeepsUpToWorldSizeIdleWorkersFromLaterJobs) {
  IdlePool pool({W(1, "hA", 0), W(2, "hA", 1), W(3, "hA", 2), W(4, "hB", 0)});
  const std::map<std::string, int> live = {{"hA", 4}, {"hB", 1}};
  EXPECT_EQ(pool.Hold("sm_90", 2, live), "hA");
  // hA has three idle and two are held: one is spare, then hB.
  EXPECT_THAT(pool.TakeOne("sm_90"), Optional(1));
  EXPECT_THAT(pool.TakeOne("sm_90"), Optional(4));
  EXPECT_EQ(pool.TakeOne("sm_90"), std::nullopt);
  // A younger gang may not take the held workers either.
  EXPECT_EQ(pool.TakeGang("sm_90", 2), std::nullopt);
}

TEST(IdlePoolTest, HoldPicksAHostThatCanHostTheGangWithTheMostIdle) {
  IdlePool pool({W(1, "hA", 0), W(2, "hB", 0), W(3, "hB", 1)});
  // hA is idle but has only two GPUs; hB and hC have four, hB two idle.
  const std::map<std::string, int> live = {{"hA", 2}, {"hB", 4}, {"hC", 4}};
  EXPECT_EQ(pool.Hold("sm_90", 4, live), "hB");
  EXPECT_THAT(pool.TakeOne("sm_90"), Optional(1));
  EXPECT_EQ(pool.TakeOne("sm_90"), std::nullopt);
  // A second waiting gang holds the next host; then none is left.
  EXPECT_EQ(pool.Hold("sm_90", 4, live), "hC");
  EXPECT_EQ(pool.Hold("sm_90", 4, live), "");
  EXPECT_EQ(pool.Hold("sm_90", 8, live), "");
}

TEST(IdlePoolTest, HoldIsPerArch) {
  IdlePool pool({W(1, "hA", 0, "sm_80"), W(2, "hA", 1)});
  EXPECT_EQ(pool.Hold("sm_80", 2, {{"hA", 2}}), "hA");
  EXPECT_THAT(pool.TakeOne("sm_90"), Optional(2));
  EXPECT_EQ(pool.TakeOne("sm_80"), std::nullopt);
}

}  // namespace
}  // namespace kbench
