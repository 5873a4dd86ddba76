// Tests of IdlePool and FindGang (server/core/idle_pool.h): one-GPU takes,
// gang placement on one host among GPUs that reach each other, and holds
// against starvation.
#include "server/core/idle_pool.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::testing::ElementsAre;
using ::testing::Optional;

// A worker of GPU `gpu` on `host`, reaching GPUs 0 to 7 of it (but
// itself) with peer access unless `peers` says which.
IdlePool::Idle W(int64_t id, const std::string& host, int gpu,
                 const std::string& arch = "sm_90",
                 std::optional<std::set<int>> peers = std::nullopt) {
  if (!peers) {
    peers.emplace();
    for (int p = 0; p < 8; ++p) {
      if (p != gpu) peers->insert(p);
    }
  }
  return {id, arch, host, gpu, *peers};
}

// A host whose GPUs 0 to n-1 all reach each other.
HostGpus Linked(int n) {
  HostGpus gpus;
  for (int g = 0; g < n; ++g) {
    for (int p = 0; p < n; ++p) {
      if (p != g) gpus[g].insert(p);
    }
  }
  return gpus;
}

TEST(FindGangTest, TheLowestGpusThatAllReachEachOther) {
  EXPECT_THAT(FindGang(Linked(4), 2), Optional(ElementsAre(0, 1)));
  EXPECT_THAT(FindGang(Linked(4), 4), Optional(ElementsAre(0, 1, 2, 3)));
  EXPECT_EQ(FindGang(Linked(4), 5), std::nullopt);
  EXPECT_EQ(FindGang(Linked(4), 0), std::nullopt);
  // Two NVLink pairs, {0, 2} and {1, 3}: a gang of two is {0, 2}; of
  // three, none.
  HostGpus pairs = {{0, {2}}, {1, {3}}, {2, {0}}, {3, {1}}};
  EXPECT_THAT(FindGang(pairs, 2), Optional(ElementsAre(0, 2)));
  EXPECT_EQ(FindGang(pairs, 3), std::nullopt);
  // A link one way only is no link: GPU 0 says it reaches 1, 1 does not.
  EXPECT_EQ(FindGang({{0, {1}}, {1, {}}}, 2), std::nullopt);
  // Without reports (no links), only a gang of one forms.
  EXPECT_EQ(FindGang({{0, {}}, {1, {}}}, 2), std::nullopt);
  EXPECT_THAT(FindGang({{0, {}}, {1, {}}}, 1), Optional(ElementsAre(0)));
}

TEST(FindGangTest, ABigHostWithoutAnAnswerEndsWithinItsBound) {
  // 63 GPUs in 7 groups, each reaching every GPU outside its group: gangs
  // of 7 abound and none of 8 exists. Trying every set of 8 would take
  // millions of steps; the search gives up at its bound instead.
  HostGpus groups;
  for (int g = 0; g < 63; ++g) {
    for (int p = 0; p < 63; ++p) {
      if (p % 7 != g % 7) groups[g].insert(p);
    }
  }
  EXPECT_EQ(FindGang(groups, 8), std::nullopt);
  EXPECT_THAT(FindGang(groups, 7), Optional(ElementsAre(0, 1, 2, 3, 4, 5, 6)));
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

TEST(IdlePoolTest, GangOnlyOfGpusThatReachEachOther) {
  // GPU 1 reaches no one; GPUs 0, 2 and 3 all reach each other.
  IdlePool pool({W(1, "hA", 0, "sm_90", std::set<int>{2, 3}),
                 W(2, "hA", 1, "sm_90", std::set<int>{}),
                 W(3, "hA", 2, "sm_90", std::set<int>{0, 3}),
                 W(4, "hA", 3, "sm_90", std::set<int>{0, 2})});
  EXPECT_EQ(pool.TakeGang("sm_90", 4), std::nullopt);
  EXPECT_THAT(pool.TakeGang("sm_90", 3), Optional(ElementsAre(1, 3, 4)));
  EXPECT_THAT(pool.TakeOne("sm_90"), Optional(2));  // One-GPU work is fine.
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

TEST(IdlePoolTest, HoldKeepsTheGpusTheGangWillFormOnFromLaterJobs) {
  IdlePool pool({W(1, "hA", 0), W(2, "hA", 1), W(3, "hA", 2), W(4, "hB", 0)});
  const std::map<std::string, HostGpus> live = {{"hA", Linked(4)},
                                                {"hB", Linked(1)}};
  EXPECT_EQ(pool.Hold("sm_90", 2, live), "hA");
  // GPUs 0 and 1 of hA are held: GPU 2, then hB, take one-GPU jobs, though
  // GPU 0's worker waited longest.
  EXPECT_THAT(pool.TakeOne("sm_90"), Optional(3));
  EXPECT_THAT(pool.TakeOne("sm_90"), Optional(4));
  EXPECT_EQ(pool.TakeOne("sm_90"), std::nullopt);
  // A younger gang may not take the held workers either.
  EXPECT_EQ(pool.TakeGang("sm_90", 2), std::nullopt);
}

TEST(IdlePoolTest, AGpuOutsideTheHeldGangKeepsServing) {
  // GPUs 0-1 and 2-3 are linked in pairs; 0 and 2 are idle, 1 and 3 busy.
  // A gang of 2 cannot form now and holds 0 and 1; GPU 2, which the gang
  // would not use, keeps taking one-GPU jobs (counting held workers kept
  // both idle).
  const HostGpus pairs = {{0, {1}}, {1, {0}}, {2, {3}}, {3, {2}}};
  IdlePool pool({W(1, "hA", 0, "sm_90", std::set<int>{1}),
                 W(3, "hA", 2, "sm_90", std::set<int>{3})});
  EXPECT_EQ(pool.TakeGang("sm_90", 2), std::nullopt);
  EXPECT_EQ(pool.Hold("sm_90", 2, {{"hA", pairs}}), "hA");
  EXPECT_THAT(pool.TakeOne("sm_90"), Optional(3));
  EXPECT_EQ(pool.TakeOne("sm_90"), std::nullopt);
}

TEST(IdlePoolTest, HoldPicksAHostThatCanHostTheGangWithTheMostIdle) {
  IdlePool pool({W(1, "hA", 0), W(2, "hB", 0), W(3, "hB", 1)});
  // hA is idle but has only two GPUs; hB and hC have four, hB two idle;
  // hD has four that do not reach each other.
  const std::map<std::string, HostGpus> live = {
      {"hA", Linked(2)},
      {"hB", Linked(4)},
      {"hC", Linked(4)},
      {"hD", {{0, {}}, {1, {}}, {2, {}}, {3, {}}}}};
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
  EXPECT_EQ(pool.Hold("sm_80", 2, {{"hA", Linked(2)}}), "hA");
  EXPECT_THAT(pool.TakeOne("sm_90"), Optional(2));
  EXPECT_EQ(pool.TakeOne("sm_80"), std::nullopt);
}

}  // namespace
}  // namespace kbench
