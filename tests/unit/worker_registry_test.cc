// Tests of WorkerRegistry (server/worker_registry.h): registration, liveness
// with explicit times, current job and jobs_done bookkeeping, AnySpec and
// LastSeen.
#include "server/worker_registry.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1700000000);

v1::WorkerInfo Info(const std::string& id, const std::string& gpu_name = "",
                    int gpu_index = 0) {
  v1::WorkerInfo info;
  info.set_worker_id(id);
  info.set_hostname("host-" + id);
  info.set_gpu_index(gpu_index);
  info.mutable_spec()->set_name(gpu_name.empty() ? "GPU " + id : gpu_name);
  info.mutable_spec()->set_arch("sm_90");
  return info;
}

std::vector<std::string> Ids(const std::vector<v1::WorkerGpu>& gpus) {
  std::vector<std::string> ids;
  for (const v1::WorkerGpu& g : gpus) ids.push_back(g.worker_id());
  return ids;
}

WorkerRegistry::Options Liveness(absl::Duration d) {
  WorkerRegistry::Options o;
  o.liveness = d;
  return o;
}

TEST(WorkerRegistryTest, EmptyRegistry) {
  WorkerRegistry r(Liveness(absl::Seconds(45)));
  EXPECT_TRUE(r.Live(kT0).empty());
  EXPECT_FALSE(r.AnyLive(kT0));
  EXPECT_FALSE(r.AnySpec(kT0).has_value());
  EXPECT_EQ(r.LastSeen(), absl::InfinitePast());
}

TEST(WorkerRegistryTest, TouchRecordsTheWorkersFacts) {
  WorkerRegistry r(Liveness(absl::Seconds(45)));
  r.Touch(Info("h:gpu1", "NVIDIA H100", 1), kT0);
  const std::vector<v1::WorkerGpu> live = r.Live(kT0);
  ASSERT_EQ(live.size(), 1u);
  const v1::WorkerGpu& g = live[0];
  EXPECT_EQ(g.worker_id(), "h:gpu1");
  EXPECT_EQ(g.hostname(), "host-h:gpu1");
  EXPECT_EQ(g.gpu_index(), 1);
  EXPECT_EQ(g.spec().name(), "NVIDIA H100");
  EXPECT_EQ(g.spec().arch(), "sm_90");
  EXPECT_FALSE(g.busy());
  EXPECT_EQ(g.current_job_id(), "");
  EXPECT_EQ(g.jobs_done(), 0);
  EXPECT_EQ(g.last_seen_unix_ms(), absl::ToUnixMillis(kT0));
  EXPECT_TRUE(r.AnyLive(kT0));
}

TEST(WorkerRegistryTest, TouchUpdatesFacts) {
  WorkerRegistry r(Liveness(absl::Seconds(45)));
  r.Touch(Info("w", "old name"), kT0);
  r.Touch(Info("w", "new name"), kT0 + absl::Seconds(1));
  const std::vector<v1::WorkerGpu> live = r.Live(kT0 + absl::Seconds(1));
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].spec().name(), "new name");
  EXPECT_EQ(live[0].last_seen_unix_ms(),
            absl::ToUnixMillis(kT0 + absl::Seconds(1)));
}

TEST(WorkerRegistryTest, LiveFiltersByLivenessAndSortsById) {
  WorkerRegistry r(Liveness(absl::Seconds(45)));
  r.Touch(Info("c"), kT0);
  r.Touch(Info("a"), kT0 + absl::Seconds(30));
  r.Touch(Info("b"), kT0 + absl::Seconds(10));
  EXPECT_THAT(Ids(r.Live(kT0 + absl::Seconds(30))),
              ::testing::ElementsAre("a", "b", "c"));
  // c was last seen 50 s before, b 40 s, a 20 s.
  EXPECT_THAT(Ids(r.Live(kT0 + absl::Seconds(50))),
              ::testing::ElementsAre("a", "b"));
  EXPECT_THAT(Ids(r.Live(kT0 + absl::Seconds(60))),
              ::testing::ElementsAre("a"));
  EXPECT_TRUE(r.Live(kT0 + absl::Seconds(80)).empty());
  EXPECT_FALSE(r.AnyLive(kT0 + absl::Seconds(80)));
  EXPECT_TRUE(r.AnyLive(kT0 + absl::Seconds(70)));
}

TEST(WorkerRegistryTest, TouchIdKeepsAKnownWorkerAlive) {
  WorkerRegistry r(Liveness(absl::Seconds(45)));
  r.Touch(Info("w"), kT0);
  EXPECT_TRUE(r.Live(kT0 + absl::Seconds(60)).empty());
  r.TouchId("w", kT0 + absl::Seconds(50));
  const std::vector<v1::WorkerGpu> live = r.Live(kT0 + absl::Seconds(60));
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].last_seen_unix_ms(),
            absl::ToUnixMillis(kT0 + absl::Seconds(50)));
  // The facts from the lease request are kept.
  EXPECT_EQ(live[0].spec().name(), "GPU w");
}

TEST(WorkerRegistryTest, TouchIdOfUnknownWorkerAddsNothing) {
  WorkerRegistry r(Liveness(absl::Seconds(45)));
  r.TouchId("ghost", kT0);
  EXPECT_TRUE(r.Live(kT0).empty());
  EXPECT_EQ(r.LastSeen(), absl::InfinitePast());
}

TEST(WorkerRegistryTest, SetCurrentJobTracksBusyAndJobsDone) {
  WorkerRegistry r(Liveness(absl::Seconds(45)));
  r.Touch(Info("w"), kT0);

  r.SetCurrentJob("w", "job-1");
  std::vector<v1::WorkerGpu> live = r.Live(kT0);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_TRUE(live[0].busy());
  EXPECT_EQ(live[0].current_job_id(), "job-1");
  EXPECT_EQ(live[0].jobs_done(), 0);

  r.SetCurrentJob("w", "");
  live = r.Live(kT0);
  EXPECT_FALSE(live[0].busy());
  EXPECT_EQ(live[0].current_job_id(), "");
  EXPECT_EQ(live[0].jobs_done(), 1);

  // Finishing again without a job in between is not another job.
  r.SetCurrentJob("w", "");
  EXPECT_EQ(r.Live(kT0)[0].jobs_done(), 1);

  r.SetCurrentJob("w", "job-2");
  r.SetCurrentJob("w", "");
  EXPECT_EQ(r.Live(kT0)[0].jobs_done(), 2);

  // A lease request does not reset the counts or the current job.
  r.SetCurrentJob("w", "job-3");
  r.Touch(Info("w"), kT0 + absl::Seconds(1));
  live = r.Live(kT0 + absl::Seconds(1));
  EXPECT_TRUE(live[0].busy());
  EXPECT_EQ(live[0].current_job_id(), "job-3");
  EXPECT_EQ(live[0].jobs_done(), 2);
}

TEST(WorkerRegistryTest, SetCurrentJobOfUnknownWorkerIsIgnored) {
  WorkerRegistry r(Liveness(absl::Seconds(45)));
  r.SetCurrentJob("ghost", "job-1");
  EXPECT_TRUE(r.Live(kT0).empty());
}

TEST(WorkerRegistryTest, AnySpecIsTheFirstLiveWorkers) {
  WorkerRegistry r(Liveness(absl::Seconds(45)));
  r.Touch(Info("b", "GPU B"), kT0);
  r.Touch(Info("a", "GPU A"), kT0 - absl::Seconds(40));
  std::optional<v1::GpuSpec> spec = r.AnySpec(kT0);
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->name(), "GPU A");
  // "a" is gone 10 s later; "b" is still connected.
  spec = r.AnySpec(kT0 + absl::Seconds(10));
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->name(), "GPU B");
  EXPECT_FALSE(r.AnySpec(kT0 + absl::Seconds(50)).has_value());
}

TEST(WorkerRegistryTest, LastSeenIsTheMostRecentContact) {
  WorkerRegistry r(Liveness(absl::Seconds(45)));
  r.Touch(Info("a"), kT0 + absl::Seconds(5));
  r.Touch(Info("b"), kT0);
  EXPECT_EQ(r.LastSeen(), kT0 + absl::Seconds(5));
  r.TouchId("b", kT0 + absl::Seconds(20));
  EXPECT_EQ(r.LastSeen(), kT0 + absl::Seconds(20));
  // Also after every worker went away.
  EXPECT_FALSE(r.AnyLive(kT0 + absl::Hours(1)));
  EXPECT_EQ(r.LastSeen(), kT0 + absl::Seconds(20));
}

}  // namespace
}  // namespace kbench
