// Tests of Scheduler's gang leases (server/core/scheduler.h,
// docs/multi-gpu.md): a multi-GPU job goes to R workers of one host at
// once, the leader runs it and the others are parked; a waiting gang holds a
// host so one-GPU jobs cannot starve it while other hosts keep serving them;
// any member's loss or restart re-queues the job and releases every member;
// a gang no host can take fails with a message saying what to start.
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/scheduler.h"
#include "server/core/scheduler_fixtures.h"
#include "testing/eventually.h"

namespace kbench {
namespace {

using testing::Eventually;
using ::testing::HasSubstr;
using testing::kLongTtl;
using testing::LeaseBox;
using ::testing::Not;
using testing::Passed;

class SchedulerGangTest : public testing::SchedulerTest {
 protected:
  // A worker of GPU `gpu` on host `host` ("a:gpu1" on "h-a"), reaching
  // GPUs 0 to 3 of the host with peer access, unless `peer_access` is
  // false (a PCIe host without peer-to-peer).
  static v1::WorkerInfo On(const std::string& host, int gpu,
                           bool peer_access = true) {
    v1::WorkerInfo info =
        testing::Worker(absl::StrCat(host, ":gpu", gpu), "sm_90");
    info.set_host_id(absl::StrCat("h-", host));
    info.set_gpu_index(gpu);
    for (int peer = 0; peer < 4; ++peer) {
      if (peer == gpu) continue;
      v1::GpuLink* link = info.add_links();
      link->set_peer_gpu_index(peer);
      link->set_peer_access(peer_access);
    }
    return info;
  }
  std::shared_ptr<LeaseBox> Ask(const std::string& host, int gpu,
                                absl::Duration wait = absl::Seconds(5),
                                bool peer_access = true) {
    auto box = std::make_shared<LeaseBox>();
    const absl::StatusOr<int64_t> id = scheduler_->RequestLease(
        On(host, gpu, peer_access), wait, LeaseBox::Reply(box));
    EXPECT_TRUE(id.ok()) << id.status();
    return box;
  }
  // Marks a worker connected without a waiting lease request (a busy one).
  void Connect(const std::string& host, int gpu) {
    workers_->Touch(On(host, gpu), absl::Now());
  }
  void EnqueueGang(const std::string& id, int world_size) {
    AddJob(id);
    v1::RunnerJob job = RunnerJobFor(id);
    job.set_world_size(world_size);
    scheduler_->Enqueue(id, std::move(job), 0);
  }
  static Scheduler::Lease LeaseOf(const std::shared_ptr<LeaseBox>& box) {
    EXPECT_TRUE(box->Wait());
    EXPECT_TRUE(box->lease().has_value());
    return box->lease().value_or(Scheduler::Lease());
  }
  // Queues gang job `id` of two and forms it on host "a": returns the
  // leases of a:gpu0 (the leader) and a:gpu1 (parked).
  std::pair<Scheduler::Lease, Scheduler::Lease> FormGang(
      const std::string& id) {
    EnqueueGang(id, 2);
    std::shared_ptr<LeaseBox> parked = Ask("a", 1);
    Scheduler::Lease leader = LeaseOf(Ask("a", 0));
    return {std::move(leader), LeaseOf(parked)};
  }
  // Whether the box got no lease within a short while.
  static bool Waits(const std::shared_ptr<LeaseBox>& box) {
    absl::SleepFor(absl::Milliseconds(50));
    return box->calls() == 0;
  }
};

TEST_F(SchedulerGangTest, GangFormsWhenEnoughWorkersOfOneHostWait) {
  Start(/*worker_present=*/true, kLongTtl);
  EnqueueGang("g1", 2);
  std::shared_ptr<LeaseBox> second = Ask("a", 1);
  EXPECT_TRUE(Waits(second));  // One GPU of two.
  std::shared_ptr<LeaseBox> first = Ask("a", 0);
  const Scheduler::Lease leader = LeaseOf(first);
  const Scheduler::Lease parked = LeaseOf(second);

  EXPECT_EQ(leader.lease_id, parked.lease_id);
  EXPECT_FALSE(leader.gang.parked());
  EXPECT_TRUE(parked.gang.parked());
  ASSERT_EQ(leader.gang.members_size(), 2);
  EXPECT_EQ(leader.gang.members(0).worker_id(), "a:gpu0");  // Rank 0.
  EXPECT_EQ(leader.gang.members(1).worker_id(), "a:gpu1");
  EXPECT_EQ(leader.gang.members(1).gpu_index(), 1);
  EXPECT_EQ(parked.gang.members_size(), 2);
  // The leader gets the job; a parked member only its id and size.
  EXPECT_FALSE(leader.job.source().empty());
  EXPECT_EQ(parked.job.job_id(), "g1");
  EXPECT_EQ(parked.job.world_size(), 2);
  EXPECT_TRUE(parked.job.source().empty());
  EXPECT_TRUE(parked.job.check_sets().empty());

  const v1::Job job = GetJob("g1");
  EXPECT_EQ(job.stage(), v1::STAGE_RUNNING);
  EXPECT_EQ(job.worker_id(), "a:gpu0");
  EXPECT_THAT(job.stage_detail(), HasSubstr("gang of 2 GPUs led by a:gpu0"));
  EXPECT_EQ(WorkerState("a:gpu0")->current_job_id(), "g1");
  EXPECT_EQ(WorkerState("a:gpu1")->current_job_id(), "g1");
}

TEST_F(SchedulerGangTest, WorkersOfTwoHostsNeverFormAGang) {
  Start(/*worker_present=*/true, kLongTtl);
  EnqueueGang("g1", 2);
  std::shared_ptr<LeaseBox> a = Ask("a", 0);
  std::shared_ptr<LeaseBox> b = Ask("b", 1);
  // Without a host id, two GPUs of one host cannot be told apart either.
  std::shared_ptr<LeaseBox> c = Request("nohost:gpu0");
  std::shared_ptr<LeaseBox> d = Request("nohost:gpu1");
  EXPECT_TRUE(Waits(a) && Waits(b) && Waits(c) && Waits(d));
  EXPECT_EQ(GetJob("g1").stage(), v1::STAGE_WAITING_GPU);
  EXPECT_THAT(GetJob("g1").stage_detail(),
              HasSubstr("waiting for a host with 2 connected sm_90"));
}

TEST_F(SchedulerGangTest, GpusWithoutPeerAccessNeverFormAGang) {
  Start(/*worker_present=*/true, kLongTtl);
  EnqueueGang("g1", 2);
  AddAndEnqueue("j1");  // Queued after the gang.
  // Both GPUs of the host are connected, but neither reaches the other:
  // the host cannot take the gang, so it is not held, and its GPU serves
  // the one-GPU job queued after the gang.
  workers_->Touch(On("a", 1, /*peer_access=*/false), absl::Now());
  const Scheduler::Lease j1 =
      LeaseOf(Ask("a", 0, absl::Seconds(5), /*peer_access=*/false));
  EXPECT_EQ(j1.job.job_id(), "j1");
  ASSERT_TRUE(scheduler_->Complete("a:gpu0", j1.lease_id, Passed()).ok());
  // Both GPUs idle together, and still no gang.
  std::shared_ptr<LeaseBox> a0 = Ask("a", 0, absl::Seconds(5), false);
  std::shared_ptr<LeaseBox> a1 = Ask("a", 1, absl::Seconds(5), false);
  EXPECT_TRUE(Waits(a0) && Waits(a1));
  EXPECT_TRUE(Eventually([&] {
    return absl::StrContains(GetJob("g1").stage_detail(),
                             "the most on one host now: 2, but no 2 of them "
                             "all reach each other");
  })) << GetJob("g1").stage_detail();
}

TEST_F(SchedulerGangTest,
       WaitingGangHoldsItsHostWhileOtherHostsServeOneGpuJobs) {
  Start(/*worker_present=*/true, kLongTtl);
  // Host a has two GPUs; gpu0 is busy with j0.
  AddAndEnqueue("j0");
  const Scheduler::Lease j0 = LeaseOf(Ask("a", 0));
  EnqueueGang("g1", 2);
  AddAndEnqueue("j1");  // Queued after the gang.
  // a:gpu1 is held for the gang: it does not take j1.
  std::shared_ptr<LeaseBox> a1 = Ask("a", 1);
  EXPECT_TRUE(Waits(a1));
  EXPECT_THAT(GetJob("g1").stage_detail(),
              HasSubstr("waiting for 2 sm_90 GPUs of one host"));
  // Another host, too small for the gang, serves j1 meanwhile.
  const Scheduler::Lease b0 = LeaseOf(Ask("b", 0));
  EXPECT_EQ(b0.job.job_id(), "j1");
  // j0 ends; a:gpu0 asks again and the gang forms.
  ASSERT_TRUE(scheduler_->Complete("a:gpu0", j0.lease_id, Passed()).ok());
  const Scheduler::Lease leader = LeaseOf(Ask("a", 0));
  EXPECT_EQ(leader.job.job_id(), "g1");
  EXPECT_FALSE(leader.gang.parked());
  EXPECT_TRUE(LeaseOf(a1).gang.parked());
}

TEST_F(SchedulerGangTest, WithoutAGangWaitingOneGpuJobsUseEveryGpu) {
  Start(/*worker_present=*/true, kLongTtl);
  AddAndEnqueue("j1");
  AddAndEnqueue("j2");
  EXPECT_EQ(LeaseOf(Ask("a", 0)).job.job_id(), "j1");
  EXPECT_EQ(LeaseOf(Ask("a", 1)).job.job_id(), "j2");
}

TEST_F(SchedulerGangTest, LeaderCompletesAndEveryMemberIsReleased) {
  Start(/*worker_present=*/true, kLongTtl);
  const auto [leader, parked] = FormGang("g1");
  Scheduler::HeartbeatReply hb =
      scheduler_->Heartbeat("a:gpu1", parked.lease_id, "ignored detail");
  EXPECT_TRUE(hb.lease_valid);
  EXPECT_THAT(GetJob("g1").stage_detail(), Not(HasSubstr("ignored")));
  // Only the leader completes.
  const absl::Status refused =
      scheduler_->Complete("a:gpu1", parked.lease_id, Passed());
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("only its leader, 'a:gpu0'"));
  ASSERT_TRUE(scheduler_->Complete("a:gpu0", leader.lease_id, Passed()).ok());
  ASSERT_EQ(FinishedCount(), 1u);
  EXPECT_EQ(Finished()[0].second.verdict(), v1::VERDICT_PASSED);
  EXPECT_FALSE(
      scheduler_->Heartbeat("a:gpu1", parked.lease_id, "").lease_valid);
  EXPECT_FALSE(WorkerState("a:gpu0")->busy());
  EXPECT_FALSE(WorkerState("a:gpu1")->busy());
}

TEST_F(SchedulerGangTest, CancelReachesEveryMember) {
  Start(/*worker_present=*/true, kLongTtl);
  const auto [leader, parked] = FormGang("g1");
  ASSERT_TRUE(scheduler_->Cancel("g1"));
  EXPECT_TRUE(scheduler_->Heartbeat("a:gpu0", leader.lease_id, "").cancel);
  EXPECT_TRUE(scheduler_->Heartbeat("a:gpu1", parked.lease_id, "").cancel);
}

TEST_F(SchedulerGangTest, ParkedMemberThatStopsHeartbeatingLosesTheGang) {
  Start();  // Lease TTL 200 ms; max_attempts 2.
  const Scheduler::Lease leader = FormGang("g1").first;
  // The leader heartbeats; its parked member does not.
  ASSERT_TRUE(Eventually([&] {
    return !scheduler_->Heartbeat("a:gpu0", leader.lease_id, "").lease_valid;
  }));
  EXPECT_EQ(scheduler_->QueueDepth(), 1);
  EXPECT_EQ(GetJob("g1").stage(), v1::STAGE_WAITING_GPU);
  EXPECT_FALSE(WorkerState("a:gpu0")->busy());
  EXPECT_FALSE(WorkerState("a:gpu1")->busy());
  // Both come back; the second attempt is lost the same way, and the
  // failure names the parked member.
  std::shared_ptr<LeaseBox> again = Ask("a", 1);
  const Scheduler::Lease second = LeaseOf(Ask("a", 0));
  EXPECT_EQ(second.attempt, 2);
  ASSERT_TRUE(Eventually([&] { return FinishedCount() == 1; }));
  const v1::JobResult r = Finished()[0].second;
  EXPECT_EQ(r.error().code(), static_cast<int>(absl::StatusCode::kUnavailable));
  EXPECT_THAT(r.message(),
              HasSubstr("a:gpu1 (parked in the job's gang) stopped "
                        "heartbeating"));
  EXPECT_THAT(r.message(), HasSubstr("a:gpu0 stopped heartbeating"));
}

TEST_F(SchedulerGangTest, RestartedParkedMemberGivesUpTheGangAtOnce) {
  Start(/*worker_present=*/true, kLongTtl);
  const Scheduler::Lease leader = FormGang("g1").first;
  // a:gpu1 restarts and asks for work: the gang is lost now, not after the
  // one-minute TTL, and the leader is told to stop.
  std::shared_ptr<LeaseBox> again = Ask("a", 1);
  EXPECT_FALSE(
      scheduler_->Heartbeat("a:gpu0", leader.lease_id, "").lease_valid);
  EXPECT_EQ(GetJob("g1").stage(), v1::STAGE_WAITING_GPU);
  // The leader asks again: the gang forms anew, attempt 2.
  const Scheduler::Lease second = LeaseOf(Ask("a", 0));
  EXPECT_EQ(second.job.job_id(), "g1");
  EXPECT_EQ(second.attempt, 2);
  EXPECT_TRUE(LeaseOf(again).gang.parked());
}

TEST_F(SchedulerGangTest, GangNoHostCanTakeFailsWithWhatToStart) {
  Start();  // no_worker_timeout 300 ms.
  Connect("a", 0);
  Connect("a", 1);
  EnqueueGang("g1", 4);
  EXPECT_THAT(GetJob("g1").stage_detail(),
              HasSubstr("the most on one host now: 2"));
  ASSERT_TRUE(Eventually([&] { return FinishedCount() == 1; }));
  const v1::JobResult r = Finished()[0].second;
  EXPECT_EQ(r.error().code(), static_cast<int>(absl::StatusCode::kUnavailable));
  EXPECT_THAT(r.message(), HasSubstr("spans 4 GPUs of one host"));
  EXPECT_THAT(r.message(), HasSubstr("the most on one host: 2"));
  EXPECT_THAT(r.message(), HasSubstr("kbworker --gpu N"));
  EXPECT_EQ(scheduler_->QueueDepth(), 0);
}

TEST_F(SchedulerGangTest, GangWaitsWhileAHostBigEnoughIsConnected) {
  Start();  // no_worker_timeout 300 ms.
  for (int gpu = 0; gpu < 4; ++gpu) Connect("a", gpu);
  EnqueueGang("g1", 4);
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_EQ(FinishedCount(), 0u);
  EXPECT_EQ(scheduler_->QueueDepth(), 1);
}

}  // namespace
}  // namespace kbench
