// Loopback tests of the worker path without a GPU: kbd + kbworker with the
// stand-in runner (kb_fake_runner, which speaks the runner protocol). They
// cover leasing, crash and hang handling (the worker survives and the next
// job passes), cancellation, lease loss with re-queue, the immediate
// re-queue when a worker restarts, restart of kbd, workers without the
// worker token, and the host id workers report.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "testing/process.h"
#include "tests/integration/kbd_waits.h"

namespace kbench {
namespace {

using ::kbench::testing::BinDir;
using ::kbench::testing::Child;
using ::kbench::testing::KbdProcess;
using ::kbench::testing::ReadSourceFile;
using ::kbench::testing::StartWorker;

std::string FakeRunner() { return BinDir() + "/kb_fake_runner"; }

// The naive example with a marker comment the fake runner acts on.
std::string Kernel(const std::string& marker) {
  return ReadSourceFile("kernels/examples/gather_linear_naive.cu") + "\n// " +
         marker + "\n";
}

class WorkerLeaseTest : public ::testing::Test {
 protected:
  void StartKbd(std::vector<std::string> args = {}, std::string data_dir = "") {
    bool has_ttl = false;
    for (const std::string& a : args) {
      has_ttl = has_ttl || absl::StartsWith(a, "--lease-ttl-ms");
    }
    if (!has_ttl) args.push_back("--lease-ttl-ms=1500");
    auto kbd = KbdProcess::Start({args, std::move(data_dir)});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = std::move(*kbd);
    stub_ = v1::Kbench::NewStub(grpc::CreateChannel(
        kbd_->address(), grpc::InsecureChannelCredentials()));
  }
  std::unique_ptr<Child> Worker(const std::string& id) {
    auto w = StartWorker(kbd_->address(), FakeRunner(), 0, {"--worker-id", id});
    EXPECT_TRUE(w.ok()) << w.status();
    return w.ok() ? std::move(*w) : nullptr;
  }
  void WaitForWorkers(int n) {
    ASSERT_TRUE(testing::WaitForGpus(stub_.get(), n, absl::Seconds(10)))
        << "workers did not connect; kbd log:\n"
        << kbd_->Log();
  }
  grpc::Status Check(const std::string& source, v1::RunCorrectnessResponse* r,
                     int budget_ms = 0) {
    v1::RunCorrectnessRequest req;
    req.mutable_kernel()->set_source(source);
    req.mutable_kernel()->set_budget_ms(budget_ms);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(60));
    return stub_->RunCorrectness(&ctx, req, r);
  }
  v1::Job Submit(v1::JobKind kind, const std::string& source) {
    v1::SubmitJobRequest req;
    req.set_kind(kind);
    req.mutable_kernel()->set_source(source);
    v1::SubmitJobResponse resp;
    grpc::ClientContext ctx;
    EXPECT_TRUE(stub_->SubmitJob(&ctx, req, &resp).ok());
    return resp.job();
  }
  // Polls the job until it reaches `stage` (or later), up to `timeout`.
  v1::Job WaitStage(const std::string& id, v1::Stage stage,
                    absl::Duration timeout = absl::Seconds(10)) {
    const absl::Time deadline = absl::Now() + timeout;
    v1::GetJobResponse resp;
    while (absl::Now() < deadline) {
      v1::GetJobRequest req;
      req.set_job_id(id);
      grpc::ClientContext ctx;
      resp.Clear();
      if (stub_->GetJob(&ctx, req, &resp).ok() && resp.job().stage() >= stage) {
        break;
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
    return resp.job();
  }
  v1::Job WaitDone(const std::string& id, absl::Duration timeout) {
    return WaitStage(id, v1::STAGE_DONE, timeout);
  }

  std::unique_ptr<KbdProcess> kbd_;
  std::unique_ptr<v1::Kbench::Stub> stub_;
};

TEST_F(WorkerLeaseTest, PassesThroughTheWorkerAndRunner) {
  StartKbd();
  auto worker = Worker("w1");
  WaitForWorkers(1);
  v1::RunCorrectnessResponse resp;
  ASSERT_TRUE(Check(Kernel("plain"), &resp).ok());
  EXPECT_EQ(resp.result().verdict(), v1::VERDICT_PASSED);
  EXPECT_EQ(resp.result().worker_id(), "w1");
  // One trial row per public check shape (default + odd = 6 shapes).
  EXPECT_EQ(resp.result().correctness().trials_size(), 6);
  EXPECT_NE(resp.result().log().find("kb_fake_runner"), std::string::npos);
  // The lease carried the cubin kbd compiled, and the GPU facts came back.
  EXPECT_EQ(resp.result().gpu().arch(), "sm_90");
}

TEST_F(WorkerLeaseTest, CrashGivesCrashedAndTheNextJobPasses) {
  StartKbd();
  auto worker = Worker("w1");
  WaitForWorkers(1);
  v1::RunCorrectnessResponse crashed;
  ASSERT_TRUE(Check(Kernel("FAKE_CRASH"), &crashed).ok());
  EXPECT_EQ(crashed.result().verdict(), v1::VERDICT_CRASHED);
  EXPECT_NE(crashed.result().message().find("signal"), std::string::npos)
      << crashed.result().message();
  v1::RunCorrectnessResponse next;
  ASSERT_TRUE(Check(Kernel("after crash"), &next).ok());
  EXPECT_EQ(next.result().verdict(), v1::VERDICT_PASSED);
  EXPECT_TRUE(worker->Running());
}

TEST_F(WorkerLeaseTest, StickyErrorGivesCrashedAndTheRunnerIsReplaced) {
  StartKbd();
  auto worker = Worker("w1");
  WaitForWorkers(1);
  v1::RunCorrectnessResponse crashed;
  ASSERT_TRUE(Check(Kernel("FAKE_UNHEALTHY"), &crashed).ok());
  EXPECT_EQ(crashed.result().verdict(), v1::VERDICT_CRASHED);
  v1::RunCorrectnessResponse next;
  ASSERT_TRUE(Check(Kernel("after sticky"), &next).ok());
  EXPECT_EQ(next.result().verdict(), v1::VERDICT_PASSED);
}

TEST_F(WorkerLeaseTest, HangIsTimedOutWithinItsBudget) {
  StartKbd();
  auto worker = Worker("w1");
  WaitForWorkers(1);
  const absl::Time t0 = absl::Now();
  v1::RunCorrectnessResponse resp;
  ASSERT_TRUE(Check(Kernel("FAKE_HANG"), &resp, /*budget_ms=*/1500).ok());
  const absl::Duration took = absl::Now() - t0;
  EXPECT_EQ(resp.result().verdict(), v1::VERDICT_TIMED_OUT);
  EXPECT_NE(resp.result().message().find("budget"), std::string::npos);
  // Budget 1.5 s + 1 s worker grace; a generous bound for a loaded machine.
  EXPECT_LT(took, absl::Seconds(10));
  v1::RunCorrectnessResponse next;
  ASSERT_TRUE(Check(Kernel("after hang"), &next).ok());
  EXPECT_EQ(next.result().verdict(), v1::VERDICT_PASSED);
}

TEST_F(WorkerLeaseTest, CancelStopsARunningJob) {
  StartKbd();
  auto worker = Worker("w1");
  WaitForWorkers(1);
  const v1::Job job =
      Submit(v1::JOB_KIND_CORRECTNESS, Kernel("FAKE_SLOW_MS=20000"));
  ASSERT_EQ(WaitStage(job.id(), v1::STAGE_RUNNING).stage(), v1::STAGE_RUNNING);
  v1::CancelJobRequest creq;
  creq.set_job_id(job.id());
  v1::CancelJobResponse cresp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub_->CancelJob(&ctx, creq, &cresp).ok());
  EXPECT_EQ(cresp.job().result().verdict(), v1::VERDICT_CANCELLED);
  // The worker stops the run and takes the next job.
  v1::RunCorrectnessResponse next;
  ASSERT_TRUE(Check(Kernel("after cancel"), &next).ok());
  EXPECT_EQ(next.result().verdict(), v1::VERDICT_PASSED);
}

TEST_F(WorkerLeaseTest, ToolCallDeadlineCancelsItsJob) {
  StartKbd();
  auto worker = Worker("w1");
  WaitForWorkers(1);
  v1::RunCorrectnessRequest req;
  req.mutable_kernel()->set_source(Kernel("FAKE_SLOW_MS=20000"));
  req.mutable_kernel()->set_session_id("s-deadline");
  v1::RunCorrectnessResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
  EXPECT_EQ(stub_->RunCorrectness(&ctx, req, &resp).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  // The job behind the call is cancelled, and the worker moves on.
  v1::ListJobsRequest lreq;
  lreq.set_session_id("s-deadline");
  v1::ListJobsResponse listed;
  grpc::ClientContext lctx;
  ASSERT_TRUE(stub_->ListJobs(&lctx, lreq, &listed).ok());
  ASSERT_EQ(listed.jobs_size(), 1);
  const v1::Job done = WaitDone(listed.jobs(0).id(), absl::Seconds(10));
  EXPECT_EQ(done.result().verdict(), v1::VERDICT_CANCELLED);
  v1::RunCorrectnessResponse next;
  ASSERT_TRUE(Check(Kernel("after deadline"), &next).ok());
  EXPECT_EQ(next.result().verdict(), v1::VERDICT_PASSED);
}

TEST_F(WorkerLeaseTest, LostLeaseIsRequeuedToAnotherWorker) {
  StartKbd();
  auto first = Worker("w-first");
  WaitForWorkers(1);
  const v1::Job job =
      Submit(v1::JOB_KIND_CORRECTNESS, Kernel("FAKE_SLOW_MS=1500"));
  ASSERT_EQ(WaitStage(job.id(), v1::STAGE_RUNNING).stage(), v1::STAGE_RUNNING);
  first->Kill();  // The worker host dies mid-job.
  auto second = Worker("w-second");
  const v1::Job done = WaitDone(job.id(), absl::Seconds(30));
  ASSERT_EQ(done.stage(), v1::STAGE_DONE) << kbd_->Log();
  EXPECT_EQ(done.result().verdict(), v1::VERDICT_PASSED);
  EXPECT_EQ(done.worker_id(), "w-second");
  EXPECT_EQ(done.attempts(), 2);
}

TEST_F(WorkerLeaseTest, QueuedJobsSurviveAKbdRestart) {
  testing::TempDir dir;
  StartKbd({"--no-worker-timeout-ms=60000"}, dir.path());
  auto worker = Worker("w1");
  WaitForWorkers(1);
  worker->Kill();  // Nobody serves the queue now; the job waits.
  const v1::Job job = Submit(v1::JOB_KIND_CORRECTNESS, Kernel("restart"));
  EXPECT_NE(job.stage(), v1::STAGE_DONE);
  ASSERT_EQ(kbd_->Stop(), 0);
  StartKbd({}, dir.path());
  auto again = Worker("w2");
  const v1::Job done = WaitDone(job.id(), absl::Seconds(30));
  ASSERT_EQ(done.stage(), v1::STAGE_DONE) << kbd_->Log();
  EXPECT_EQ(done.result().verdict(), v1::VERDICT_PASSED);
}

TEST_F(WorkerLeaseTest, WorkerWithoutAGpuExitsWithAClearError) {
  StartKbd();
  auto w = StartWorker(kbd_->address(), FakeRunner(), 0, {});
  ASSERT_TRUE(w.ok());
  // Without this variable the fake runner says hello; with it, it fails.
  auto failing = Child::Start(
      {BinDir() + "/kbworker", "--server", kbd_->address(), "--runner",
       FakeRunner(), "--token-file", kbd_->worker_token_file()},
      {{"KB_FAKE_RUNNER_FAIL_HELLO", "1"}});
  ASSERT_TRUE(failing.ok());
  EXPECT_EQ((*failing)->Wait(absl::Seconds(30)), 3);
  EXPECT_NE((*failing)->Stderr().find("runner could not start"),
            std::string::npos)
      << (*failing)->Stderr();
}

TEST_F(WorkerLeaseTest, WorkerWithoutTheTokenExitsWithAClearError) {
  StartKbd();
  // No token at all: refused before it dials kbd.
  auto none = Child::Start(
      {BinDir() + "/kbworker", "--server", kbd_->address(), "--runner",
       FakeRunner()},
      {{"KBENCH_WORKER_TOKEN_FILE", ""}, {"KBENCH_WORKER_TOKEN", ""}});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*none)->Wait(absl::Seconds(30)), 2);
  EXPECT_NE((*none)->Stderr().find("--token-file"), std::string::npos)
      << (*none)->Stderr();
  // A wrong token: kbd refuses it, and the worker says so and exits.
  auto wrong = Child::Start({BinDir() + "/kbworker", "--server",
                             kbd_->address(), "--runner", FakeRunner()},
                            {{"KBENCH_WORKER_TOKEN_FILE", ""},
                             {"KBENCH_WORKER_TOKEN", std::string(64, 'a')}});
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ((*wrong)->Wait(absl::Seconds(30)), 3);
  EXPECT_NE((*wrong)->Stderr().find("worker token is wrong"), std::string::npos)
      << (*wrong)->Stderr();
  EXPECT_NE((*wrong)->Stderr().find(kbd_->worker_token_file()),
            std::string::npos)
      << (*wrong)->Stderr();
}

// Workers of one host report one host id (here the host's machine id, or
// --host-id for all of them, as in a container); kbd shows it per GPU, and
// refuses a --host-id that is not an id before the worker dials kbd.
TEST_F(WorkerLeaseTest, WorkersOfOneHostReportOneHostId) {
  StartKbd();
  auto a = StartWorker(kbd_->address(), FakeRunner(), 0,
                       {"--worker-id", "a", "--host-id", "node-7"});
  auto b = StartWorker(kbd_->address(), FakeRunner(), 1,
                       {"--worker-id", "b", "--host-id", "node-7"});
  auto c = StartWorker(kbd_->address(), FakeRunner(), 2, {"--worker-id", "c"});
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  WaitForWorkers(3);
  v1::GetGpuSpecsResponse specs;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub_->GetGpuSpecs(&ctx, v1::GetGpuSpecsRequest(), &specs).ok());
  ASSERT_EQ(specs.gpus_size(), 3);
  std::map<std::string, std::string> host;
  for (const v1::WorkerGpu& g : specs.gpus()) host[g.worker_id()] = g.host_id();
  EXPECT_EQ(host["a"], "node-7");
  EXPECT_EQ(host["b"], "node-7");
  // c derives its id from this machine's id (empty without one).
  EXPECT_THAT(host["c"], ::testing::MatchesRegex("(h-[0-9a-f]{32})?"));

  auto bad = Child::Start({BinDir() + "/kbworker", "--server", kbd_->address(),
                           "--runner", FakeRunner(), "--token-file",
                           kbd_->worker_token_file(), "--host-id",
                           "node 7\nGPU 9: forged"});
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ((*bad)->Wait(absl::Seconds(30)), 2);
  EXPECT_NE((*bad)->Stderr().find("--host-id"), std::string::npos)
      << (*bad)->Stderr();
}

TEST_F(WorkerLeaseTest, RestartedWorkerGetsItsJobBackAtOnce) {
  // A TTL far beyond the test: only the immediate release can re-run it.
  StartKbd({"--lease-ttl-ms=60000"});
  auto first = Worker("w-restart");
  WaitForWorkers(1);
  const v1::Job job =
      Submit(v1::JOB_KIND_CORRECTNESS, Kernel("FAKE_SLOW_MS=1500"));
  ASSERT_EQ(WaitStage(job.id(), v1::STAGE_RUNNING).stage(), v1::STAGE_RUNNING);
  first->Kill();
  const absl::Time t0 = absl::Now();
  auto again = Worker("w-restart");
  const v1::Job done = WaitDone(job.id(), absl::Seconds(30));
  ASSERT_EQ(done.stage(), v1::STAGE_DONE) << kbd_->Log();
  EXPECT_EQ(done.result().verdict(), v1::VERDICT_PASSED);
  EXPECT_EQ(done.attempts(), 2);
  EXPECT_LT(absl::Now() - t0, absl::Seconds(20)) << kbd_->Log();
  EXPECT_NE(kbd_->Log().find("w-restart restarted while running it"),
            std::string::npos)
      << kbd_->Log();
}

// Two kbworkers under one id (before instance ids, each lease request of
// one released the other's job as "restarted", in turn): the second takes
// the id over, the first says why and stands by, and jobs run once each on
// the second.
TEST_F(WorkerLeaseTest, TwoWorkersWithOneIdLeaveOneServing) {
  StartKbd();
  auto first = Worker("w-same");
  WaitForWorkers(1);
  auto second = Worker("w-same");
  ASSERT_NE(first, nullptr);
  bool told = false;
  for (int i = 0; i < 300 && !told; ++i) {
    told = absl::StrContains(first->Stderr(), "taken over by a newer kbworker");
    if (!told) absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_TRUE(told) << first->Stderr();
  for (int i = 0; i < 3; ++i) {
    const v1::Job job =
        Submit(v1::JOB_KIND_CORRECTNESS, Kernel(absl::StrCat("one id ", i)));
    const v1::Job done = WaitDone(job.id(), absl::Seconds(30));
    ASSERT_EQ(done.stage(), v1::STAGE_DONE) << kbd_->Log();
    EXPECT_EQ(done.result().verdict(), v1::VERDICT_PASSED);
    EXPECT_EQ(done.attempts(), 1) << kbd_->Log();
  }
  EXPECT_TRUE(first->Running()) << first->Stderr();
}

}  // namespace
}  // namespace kbench
