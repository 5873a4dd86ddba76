// Tests of WorkerLoop (worker/worker_loop.h) against a scripted kbd: an
// in-process WorkerService that hands out the leases a test lists and
// records heartbeats and completions. They cover a worker's part in a gang
// lease (docs/multi-gpu.md): a parked member heartbeats the lease and runs
// nothing until kbd says it ended, then asks for work again; the leader
// runs the job in a runner of its own that sees every member's GPU, in rank
// order, and refuses a gang that does not have it as rank 0.
#include <grpcpp/grpcpp.h>

#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kbench/v1/worker.grpc.pb.h"
#include "testing/eventually.h"
#include "worker/runner_process_fixtures.h"
#include "worker/worker_loop.h"

namespace kbench {
namespace {

using testing::Eventually;
using ::testing::HasSubstr;

// kbd's worker API as a script: LeaseJob answers with the listed leases in
// turn, then empty after a short wait; Heartbeat says a lease is valid for
// its first `valid_heartbeats` calls.
class ScriptedKbd final : public v1::WorkerService::Service {
 public:
  ScriptedKbd(std::deque<v1::LeaseJobResponse> leases, int valid_heartbeats)
      : leases_(std::move(leases)), valid_heartbeats_(valid_heartbeats) {}

  grpc::Status LeaseJob(grpc::ServerContext*, const v1::LeaseJobRequest*,
                        v1::LeaseJobResponse* response) override {
    {
      absl::MutexLock lock(&mu_);
      ++lease_requests_;
      if (!leases_.empty()) {
        *response = leases_.front();
        leases_.pop_front();
        return grpc::Status::OK;
      }
    }
    absl::SleepFor(absl::Milliseconds(50));
    return grpc::Status::OK;
  }
  grpc::Status Heartbeat(grpc::ServerContext*,
                         const v1::HeartbeatRequest* request,
                         v1::HeartbeatResponse* response) override {
    absl::MutexLock lock(&mu_);
    const int n = ++heartbeats_[request->lease_id()];
    response->set_lease_valid(n <= valid_heartbeats_);
    if (n == valid_heartbeats_ + 1) requests_at_end_ = lease_requests_;
    return grpc::Status::OK;
  }
  grpc::Status CompleteJob(grpc::ServerContext*,
                           const v1::CompleteJobRequest* request,
                           v1::CompleteJobResponse*) override {
    absl::MutexLock lock(&mu_);
    completed_.push_back(*request);
    return grpc::Status::OK;
  }

  int LeaseRequests() {
    absl::MutexLock lock(&mu_);
    return lease_requests_;
  }
  int Heartbeats(const std::string& lease_id) {
    absl::MutexLock lock(&mu_);
    return heartbeats_[lease_id];
  }
  // LeaseJob calls made before the heartbeat that ended the lease.
  int RequestsAtEnd() {
    absl::MutexLock lock(&mu_);
    return requests_at_end_;
  }
  std::vector<v1::CompleteJobRequest> Completed() {
    absl::MutexLock lock(&mu_);
    return completed_;
  }

 private:
  absl::Mutex mu_;
  std::deque<v1::LeaseJobResponse> leases_ ABSL_GUARDED_BY(mu_);
  const int valid_heartbeats_;
  int lease_requests_ ABSL_GUARDED_BY(mu_) = 0;
  int requests_at_end_ ABSL_GUARDED_BY(mu_) = -1;
  std::map<std::string, int> heartbeats_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::CompleteJobRequest> completed_ ABSL_GUARDED_BY(mu_);
};

// A gang lease of job j-gang on the GPUs `gpus`, in rank order (the test's
// worker is h:gpu1, on GPU 1).
v1::LeaseJobResponse GangLease(bool parked,
                               const std::vector<int>& gpus = {0, 1}) {
  v1::LeaseJobResponse lease;
  lease.set_lease_id("l-1-gang");
  lease.set_attempt(1);
  lease.set_lease_ttl_ms(2000);
  lease.mutable_job()->set_job_id("j-gang");
  lease.mutable_job()->set_world_size(static_cast<int>(gpus.size()));
  // A check job that passes in the fake runner: a plan, no golden.
  lease.mutable_job()->set_kind(v1::JOB_KIND_CORRECTNESS);
  lease.mutable_job()->mutable_problem()->set_name("p");
  v1::LaunchSpec* launch = lease.mutable_job()->mutable_plan()->add_launches();
  launch->set_entry("k");
  launch->add_grid("1");
  launch->add_block("1");
  for (int gpu : gpus) {
    v1::GangMember* m = lease.mutable_gang()->add_members();
    m->set_worker_id(absl::StrCat("h:gpu", gpu));
    m->set_gpu_index(gpu);
  }
  lease.mutable_gang()->set_parked(parked);
  return lease;
}

class WorkerLoopGangTest : public ::testing::Test {
 protected:
  void Serve(std::deque<v1::LeaseJobResponse> leases, int valid_heartbeats) {
    ASSERT_EQ(access(runner_process_testing::FakeRunnerPath().c_str(), X_OK),
              0);
    kbd_ = std::make_unique<ScriptedKbd>(std::move(leases), valid_heartbeats);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(kbd_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    WorkerLoop::Options o;
    o.server = absl::StrCat("127.0.0.1:", port);
    o.token = "test-token";
    o.gpu = 1;
    o.worker_id = "h:gpu1";
    o.runner = runner_process_testing::FakeRunnerPath();
    o.lease_wait = absl::Milliseconds(100);
    o.heartbeat = absl::Milliseconds(20);
    loop_ = std::make_unique<WorkerLoop>(o);
    thread_ = std::thread([this] { status_ = loop_->Run(); });
  }
  void TearDown() override {
    if (loop_) loop_->Stop();
    if (thread_.joinable()) thread_.join();
    EXPECT_TRUE(status_.ok()) << status_;
    if (server_) server_->Shutdown();
  }

  std::unique_ptr<ScriptedKbd> kbd_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<WorkerLoop> loop_;
  std::thread thread_;
  absl::Status status_;
};

TEST_F(WorkerLoopGangTest,
       ParkedMemberHeartbeatsUntilTheGangEndsThenAsksAgain) {
  Serve({GangLease(/*parked=*/true)}, /*valid_heartbeats=*/3);
  // Three heartbeats the lease holds, one that says it ended, then the
  // worker asks for work again.
  ASSERT_TRUE(Eventually([&] { return kbd_->Heartbeats("l-1-gang") == 4; }));
  ASSERT_TRUE(Eventually([&] { return kbd_->LeaseRequests() >= 2; }));
  // While parked it asked for nothing, and it never completes a lease it
  // does not lead.
  EXPECT_EQ(kbd_->RequestsAtEnd(), 1);
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(kbd_->Heartbeats("l-1-gang"), 4);
  EXPECT_TRUE(kbd_->Completed().empty());
}

TEST_F(WorkerLoopGangTest, LeaderRunsTheJobOnEveryMembersGpuInRankOrder) {
  // This worker (GPU 1) leads a gang of GPUs 1, 3 and 2.
  Serve({GangLease(/*parked=*/false, {1, 3, 2})}, /*valid_heartbeats=*/100);
  ASSERT_TRUE(Eventually([&] { return kbd_->Completed().size() == 1; }));
  const v1::CompleteJobRequest done = kbd_->Completed()[0];
  EXPECT_EQ(done.lease_id(), "l-1-gang");
  EXPECT_EQ(done.result().verdict(), v1::VERDICT_PASSED)
      << done.result().message();
  // The fake runner names what it was given.
  EXPECT_EQ(done.result().message(),
            "3 ranks (fake) on CUDA_VISIBLE_DEVICES=1,3,2");
  EXPECT_EQ(done.result().gpu().arch(), "sm_90");  // The fake runner's GPU.
}

TEST_F(WorkerLoopGangTest, LeaderRefusesAGangThatDoesNotHaveItAsRankZero) {
  // kbd's bug, or a forged lease: rank 0 is another worker.
  Serve({GangLease(/*parked=*/false, {0, 1})}, /*valid_heartbeats=*/100);
  ASSERT_TRUE(Eventually([&] { return kbd_->Completed().size() == 1; }));
  const v1::CompleteJobRequest done = kbd_->Completed()[0];
  EXPECT_EQ(done.result().verdict(), v1::VERDICT_ERROR);
  EXPECT_EQ(done.result().error().code(),
            static_cast<int>(absl::StatusCode::kInternal));
  EXPECT_THAT(done.result().message(), HasSubstr("rank 0 is h:gpu0"));
}

TEST_F(WorkerLoopGangTest, LeaderRefusesAGangThatNamesAGpuTwice) {
  Serve({GangLease(/*parked=*/false, {1, 1})}, /*valid_heartbeats=*/100);
  ASSERT_TRUE(Eventually([&] { return kbd_->Completed().size() == 1; }));
  EXPECT_THAT(kbd_->Completed()[0].result().message(),
              HasSubstr("names GPU 1 twice"));
}

}  // namespace
}  // namespace kbench
