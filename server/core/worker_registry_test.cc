// Tests of WorkerRegistry (server/core/worker_registry.h): registration,
// liveness with explicit times, current job and jobs_done bookkeeping, the
// checks of a worker's facts (ValidateWorkerInfo) and their binding to its id,
// the strictest spec per arch, the compile arch choice, and LastSeen.
#include "server/core/worker_registry.h"

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/worker_info_fixtures.h"

namespace kbench {
namespace {

using testing::Valid;

using ::testing::HasSubstr;
using ::testing::Not;

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
  ids.reserve(gpus.size());
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
  EXPECT_FALSE(r.StrictestSpec("sm_90", kT0).has_value());
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

// The host id is optional; where given, kbd records it and shows it, so it
// is held to the alphabet and length of other ids.
TEST(WorkerRegistryTest, AHostIdIsRecordedAndBounded) {
  WorkerRegistry r(Liveness(absl::Seconds(45)));
  v1::WorkerInfo info = Valid("h:gpu0");
  info.set_host_id("h-0123456789abcdef0123456789abcdef");
  ASSERT_TRUE(r.Register(info, kT0).ok());
  ASSERT_EQ(r.Live(kT0).size(), 1u);
  EXPECT_EQ(r.Live(kT0)[0].host_id(), "h-0123456789abcdef0123456789abcdef");
  for (const std::string& bad :
       {std::string(129, 'h'), std::string("h-1\nGPU 9: forged"),
        std::string("<script>"), std::string("h 1")}) {
    info.set_host_id(bad);
    absl::Status s = ValidateWorkerInfo(info);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(s.message(), HasSubstr("worker.host_id")) << bad;
    // The worker names its host itself: no RPC of kbd's hands one out.
    EXPECT_THAT(s.message(), Not(HasSubstr("; use"))) << bad;
  }
}

// What a gang lease could span: connected GPUs of one arch per host, with
// the GPUs each reaches.
TEST(WorkerRegistryTest, LiveHostGpusGivesEachHostsGpusAndTheirPeers) {
  WorkerRegistry r(Liveness(absl::Seconds(45)));
  auto on = [&](const std::string& id, const std::string& host, int gpu,
                const std::string& arch, absl::Time at,
                const std::vector<std::pair<int, bool>>& links = {}) {
    v1::WorkerInfo info = Info(id, "", gpu);
    info.set_host_id(host);
    info.mutable_spec()->set_arch(arch);
    for (const auto& [peer, access] : links) {
      v1::GpuLink* l = info.add_links();
      l->set_peer_gpu_index(peer);
      l->set_peer_access(access);
    }
    r.Touch(info, at);
  };
  on("a0", "h-a", 0, "sm_90", kT0, {{1, true}, {2, false}});
  on("a1", "h-a", 1, "sm_90", kT0, {{0, true}});
  on("a1again", "h-a", 1, "sm_90", kT0);  // A second id on GPU 1.
  on("a2", "h-a", 2, "sm_80", kT0);       // Another arch.
  on("b0", "h-b", 0, "sm_90", kT0);
  on("b1", "h-b", 1, "sm_90", kT0 - absl::Minutes(5));  // Gone.
  on("nohost", "", 3, "sm_90", kT0);
  using Gpus = std::map<int, std::set<int>>;
  EXPECT_EQ(r.LiveHostGpus("sm_90", kT0),
            (std::map<std::string, Gpus>{{"h-a", {{0, {1}}, {1, {0}}}},
                                         {"h-b", {{0, {}}}}}));
  EXPECT_EQ(r.LiveHostGpus("sm_80", kT0),
            (std::map<std::string, Gpus>{{"h-a", {{2, {}}}}}));
  EXPECT_TRUE(r.LiveHostGpus("sm_100", kT0).empty());
}

TEST(WorkerRegistryTest, ALiveIdKeepsTheSpecItRegisteredWith) {
  WorkerRegistry r(Liveness(absl::Seconds(45)));
  ASSERT_TRUE(r.Register(Valid("w"), kT0).ok());
  // The same worker again, with fresh measured ceilings (a new runner).
  v1::WorkerInfo again = Valid("w");
  again.mutable_spec()->set_measured_copy_gbps(3990);
  EXPECT_TRUE(r.Register(again, kT0 + absl::Seconds(1)).ok());
  EXPECT_EQ(r.SpecOf("w")->measured_copy_gbps(), 3990);
  // Another spec under the live id: refused, the first one stays.
  v1::WorkerInfo fake = Valid("w");
  fake.mutable_spec()->set_max_threads_per_block(64);
  absl::Status s = r.Register(fake, kT0 + absl::Seconds(2));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("'w'"));
  EXPECT_THAT(s.message(), HasSubstr("--worker-id"));
  EXPECT_THAT(s.message(), HasSubstr("max_threads_per_block"));
  EXPECT_EQ(r.SpecOf("w")->max_threads_per_block(), 1024);
  // Another host under the id: refused too.
  v1::WorkerInfo other_host = Valid("w");
  other_host.set_hostname("elsewhere");
  EXPECT_EQ(r.Register(other_host, kT0 + absl::Seconds(3)).code(),
            absl::StatusCode::kFailedPrecondition);
  // And another host id: a worker id cannot move its GPU to another host
  // of a gang while it is connected.
  v1::WorkerInfo other_host_id = Valid("w");
  other_host_id.set_host_id("h-elsewhere");
  s = r.Register(other_host_id, kT0 + absl::Seconds(3));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("host_id"));
  // Once the first registration expired, the id may name another GPU.
  EXPECT_TRUE(r.Register(fake, kT0 + absl::Seconds(50)).ok());
  EXPECT_EQ(r.SpecOf("w")->max_threads_per_block(), 64);
}

// Two kbworker processes under one id (both left at --gpu 0): the newer
// one takes the id over, as a restarted worker does, and the older one is
// refused while the newer is connected; once the newer is gone, the older
// may take the id back.
TEST(WorkerRegistryTest, ANewerInstanceTakesTheIdOverAndTheOlderIsRefused) {
  WorkerRegistry r(Liveness(absl::Seconds(45)));
  v1::WorkerInfo first = Valid("h:gpu0");
  first.set_instance_id("i-000000000001");
  v1::WorkerInfo second = first;
  second.set_instance_id("i-000000000002");
  ASSERT_TRUE(r.Register(first, kT0).ok());
  ASSERT_TRUE(r.Register(first, kT0 + absl::Seconds(1)).ok());
  ASSERT_TRUE(r.Register(second, kT0 + absl::Seconds(2)).ok());
  const absl::Status s = r.Register(first, kT0 + absl::Seconds(3));
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << s;
  EXPECT_THAT(s.message(), HasSubstr("'h:gpu0' was taken over"));
  EXPECT_THAT(s.message(), HasSubstr("i-000000000002"));
  EXPECT_THAT(s.message(), HasSubstr("--worker-id"));
  EXPECT_TRUE(r.Register(second, kT0 + absl::Seconds(4)).ok());
  EXPECT_EQ(r.Register(first, kT0 + absl::Seconds(48)).code(),
            absl::StatusCode::kAlreadyExists);
  // The second went quiet for longer than the liveness: the first takes
  // the id back, and now the second is the one refused.
  EXPECT_TRUE(r.Register(first, kT0 + absl::Seconds(50)).ok());
  EXPECT_EQ(r.Register(second, kT0 + absl::Seconds(51)).code(),
            absl::StatusCode::kAlreadyExists);
  // A worker that sends no instance (an older kbworker) is not fenced.
  v1::WorkerInfo legacy = Valid("h:gpu0");
  EXPECT_TRUE(r.Register(legacy, kT0 + absl::Seconds(52)).ok());
  // The memory of replaced instances is bounded (16): after 20 more
  // instances, the most recent replaced one is refused and the oldest,
  // `second`, is forgotten, so it counts as new and takes the id.
  const absl::Time later = kT0 + absl::Minutes(5);
  for (int i = 10; i < 30; ++i) {
    v1::WorkerInfo next = first;
    next.set_instance_id(absl::StrCat("i-0000000000", i));
    ASSERT_TRUE(r.Register(next, later).ok()) << i;
  }
  v1::WorkerInfo recent = first;
  recent.set_instance_id("i-000000000028");
  EXPECT_EQ(r.Register(recent, later).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(r.Register(second, later).ok());
  // An instance id is checked like any id.
  v1::WorkerInfo bad = Valid("h:gpu0");
  bad.set_instance_id("i-/../x");
  EXPECT_EQ(ValidateWorkerInfo(bad).code(), absl::StatusCode::kInvalidArgument);
}

TEST(WorkerRegistryTest, StrictestSpecIsTheMinimumOverLiveWorkersOfTheArch) {
  WorkerRegistry r(Liveness(absl::Seconds(45)));
  EXPECT_FALSE(r.StrictestSpec("sm_90", kT0).has_value());
  v1::WorkerInfo a = Valid("a");
  a.mutable_spec()->set_max_threads_per_block(512);
  a.mutable_spec()->set_max_block_dims(2, 32);
  v1::WorkerInfo b = Valid("b");
  b.mutable_spec()->set_name("NVIDIA H100");
  b.mutable_spec()->set_smem_per_block_optin_bytes(100 * 1024);
  b.mutable_spec()->clear_regs_per_block();  // Not reported: ignored.
  v1::WorkerInfo c = Valid("c", "sm_80");
  c.mutable_spec()->set_max_threads_per_block(64);
  ASSERT_TRUE(r.Register(b, kT0).ok());
  ASSERT_TRUE(r.Register(a, kT0 - absl::Seconds(40)).ok());
  ASSERT_TRUE(r.Register(c, kT0).ok());
  std::optional<v1::GpuSpec> s = r.StrictestSpec("sm_90", kT0);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->arch(), "sm_90");
  EXPECT_EQ(s->max_threads_per_block(), 512);  // a's, not c's (sm_80).
  EXPECT_EQ(s->smem_per_block_optin_bytes(), 100 * 1024);  // b's.
  EXPECT_EQ(s->regs_per_block(), 65536);
  EXPECT_THAT(s->max_block_dims(), ::testing::ElementsAre(1024, 1024, 32));
  EXPECT_THAT(s->name(), HasSubstr("strictest of 2"));
  EXPECT_THAT(s->name(), HasSubstr("NVIDIA H100"));
  // Ten seconds later a is gone: b alone.
  s = r.StrictestSpec("sm_90", kT0 + absl::Seconds(10));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->max_threads_per_block(), 1024);
  EXPECT_EQ(s->name(), "NVIDIA H100");
  EXPECT_EQ(r.StrictestSpec("sm_80", kT0)->max_threads_per_block(), 64);
  EXPECT_FALSE(r.StrictestSpec("sm_100", kT0).has_value());
  EXPECT_FALSE(r.StrictestSpec("sm_90", kT0 + absl::Seconds(50)).has_value());
}

TEST(WorkerRegistryTest, ChooseArchFollowsTheConnectedWorkers) {
  WorkerRegistry r(Liveness(absl::Seconds(45)));
  // Nobody connected: the request's arch, else the default.
  EXPECT_EQ(*r.ChooseArch("", true, "sm_90", kT0), "sm_90");
  EXPECT_EQ(*r.ChooseArch("sm_80", true, "sm_90", kT0), "sm_80");
  ASSERT_TRUE(r.Register(Valid("a", "sm_80"), kT0).ok());
  ASSERT_TRUE(r.Register(Valid("b", "sm_90"), kT0).ok());
  ASSERT_TRUE(r.Register(Valid("c", "sm_90"), kT0).ok());
  EXPECT_EQ(*r.ChooseArch("", true, "sm_100", kT0), "sm_90");  // Most.
  EXPECT_EQ(*r.ChooseArch("sm_80", true, "sm_90", kT0), "sm_80");
  absl::StatusOr<std::string> none = r.ChooseArch("sm_100", true, "", kT0);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(none.status().message(), HasSubstr("sm_100"));
  EXPECT_THAT(none.status().message(), HasSubstr("sm_80 (1 worker)"));
  EXPECT_THAT(none.status().message(), HasSubstr("sm_90 (2 workers)"));
  // A compile-only job may target any arch.
  EXPECT_EQ(*r.ChooseArch("sm_100", false, "", kT0), "sm_100");
  EXPECT_EQ(r.LiveArchs(kT0),
            (std::map<std::string, int>{{"sm_80", 1}, {"sm_90", 2}}));
  EXPECT_EQ(r.LastSeenWithArch("sm_80"), kT0);
  EXPECT_EQ(r.LastSeenWithArch("sm_100"), absl::InfinitePast());
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
