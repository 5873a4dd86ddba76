// The worker API against a real kbd process, as an attacker on loopback
// would use it: without the worker token every WorkerService call is
// UNAUTHENTICATED and with a wrong one PERMISSION_DENIED (and a queued job
// stays queued); the tool API still needs no token; a worker that holds the
// token cannot store a verdict that contradicts its own report; fake GPU
// specs (out of range, or under a live worker's id) cannot make compiles
// fail; forged links to other GPUs are refused; GPU jobs for an arch no
// worker has are refused; kbd refuses a token
// file others can read; and the honest path (kbworker with the stand-in
// runner) still passes end to end.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "kbench/v1/worker.grpc.pb.h"
#include "testing/process.h"
#include "tests/integration/kbd_waits.h"

namespace kbench {
namespace {

using ::kbench::testing::BinDir;
using ::kbench::testing::Child;
using ::kbench::testing::KbdProcess;
using ::kbench::testing::ReadSourceFile;
using ::kbench::testing::StartWorker;
using ::kbench::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Kernel(const std::string& marker = "plain") {
  return ReadSourceFile("kernels/examples/gather_linear_naive.cu") + "\n// " +
         marker + "\n";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A plausible sm_90 GPU, as a rogue worker would describe one.
v1::WorkerInfo RogueInfo(const std::string& id) {
  v1::WorkerInfo info;
  info.set_worker_id(id);
  info.set_hostname("rogue");
  info.set_version(KBENCH_VERSION);
  v1::GpuSpec* s = info.mutable_spec();
  s->set_name("Rogue GPU");
  s->set_arch("sm_90");
  s->set_cc_major(9);
  s->set_sm_count(132);
  s->set_max_threads_per_block(1024);
  return info;
}

class WorkerAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KbdProcess::Options options;
    options.extra_args = {"--no-worker-timeout-ms=60000"};
    auto kbd = KbdProcess::Start(options);
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = std::move(*kbd);
    auto channel = grpc::CreateChannel(kbd_->address(),
                                       grpc::InsecureChannelCredentials());
    kbench_ = v1::Kbench::NewStub(channel);
    workers_ = v1::WorkerService::NewStub(channel);
    token_ = ReadFile(kbd_->worker_token_file());
    while (!token_.empty() && token_.back() == '\n') token_.pop_back();
  }

  // A context with the given authorization value ("" for none).
  static std::unique_ptr<grpc::ClientContext> Ctx(
      const std::string& authorization, int timeout_s = 10) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    if (!authorization.empty()) {
      ctx->AddMetadata("authorization", authorization);
    }
    ctx->set_deadline(std::chrono::system_clock::now() +
                      std::chrono::seconds(timeout_s));
    return ctx;
  }
  std::string Bearer() const { return "Bearer " + token_; }

  grpc::Status Lease(const std::string& auth, const v1::WorkerInfo& info,
                     v1::LeaseJobResponse* resp, int wait_ms = 0) {
    v1::LeaseJobRequest req;
    *req.mutable_worker() = info;
    req.set_wait_ms(wait_ms);
    return workers_->LeaseJob(Ctx(auth, 30).get(), req, resp);
  }

  // kbd has registered no GPU worker: GetGpuSpecs lists none.
  void ExpectNoWorkerRegistered() {
    v1::GetGpuSpecsResponse specs;
    const grpc::Status listed = kbench_->GetGpuSpecs(Ctx("").get(), {}, &specs);
    EXPECT_EQ(listed.error_code(), grpc::StatusCode::FAILED_PRECONDITION)
        << listed.error_message();
    EXPECT_EQ(specs.gpus_size(), 0);
  }

  v1::Job SubmitJob(v1::JobKind kind, const std::string& source) {
    v1::SubmitJobRequest req;
    req.set_kind(kind);
    req.mutable_kernel()->set_source(source);
    v1::SubmitJobResponse resp;
    const grpc::Status s = kbench_->SubmitJob(Ctx("").get(), req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.job();
  }

  v1::Job GetJob(const std::string& id) {
    v1::GetJobRequest req;
    req.set_job_id(id);
    v1::GetJobResponse resp;
    EXPECT_TRUE(kbench_->GetJob(Ctx("").get(), req, &resp).ok());
    return resp.job();
  }

  v1::Job WaitDone(const std::string& id, absl::Duration timeout) {
    const absl::Time end = absl::Now() + timeout;
    v1::Job job = GetJob(id);
    while (job.stage() != v1::STAGE_DONE && absl::Now() < end) {
      absl::SleepFor(absl::Milliseconds(20));
      job = GetJob(id);
    }
    return job;
  }

  // Compiles the naive kernel (block(256)); the compile report's success.
  bool CompileOk(std::string* why) {
    v1::CompileKernelRequest req;
    req.mutable_kernel()->set_source(Kernel());
    v1::CompileKernelResponse resp;
    const grpc::Status s =
        kbench_->CompileKernel(Ctx("", 60).get(), req, &resp);
    *why = s.error_message();
    return s.ok() && resp.compile().success();
  }

  void WaitForWorkers(int n) {
    ASSERT_TRUE(testing::WaitForGpus(kbench_.get(), n, absl::Seconds(20),
                                     [] { return Ctx(""); }))
        << "workers did not connect; kbd log:\n"
        << kbd_->Log();
  }

  std::unique_ptr<KbdProcess> kbd_;
  std::unique_ptr<v1::Kbench::Stub> kbench_;
  std::unique_ptr<v1::WorkerService::Stub> workers_;
  std::string token_;
};

TEST_F(WorkerAuthTest, KbdCreatesAPrivateTokenFile) {
  EXPECT_EQ(kbd_->worker_token_file(), kbd_->data_dir() + "/worker.token");
  struct stat st;
  ASSERT_EQ(stat(kbd_->worker_token_file().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(token_.size(), 64u);
  // kbd says where the token is, and never what it is.
  EXPECT_THAT(kbd_->Log(), HasSubstr(kbd_->worker_token_file()));
  EXPECT_THAT(kbd_->Log(), Not(HasSubstr(token_)));
}

TEST_F(WorkerAuthTest, EveryWorkerCallNeedsTheToken) {
  // A victim's job waits in the queue.
  const v1::Job victim = [&] {
    v1::LeaseJobResponse ignored;
    // The job needs a connected worker to be accepted: one honest-looking
    // registration (with the token), then it goes away.
    EXPECT_TRUE(Lease(Bearer(), RogueInfo("briefly:gpu0"), &ignored).ok());
    return SubmitJob(v1::JOB_KIND_SUBMIT, Kernel());
  }();
  ASSERT_FALSE(victim.id().empty());
  for (int i = 0;
       i < 1000 && GetJob(victim.id()).stage() < v1::STAGE_WAITING_GPU; ++i) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_EQ(GetJob(victim.id()).stage(), v1::STAGE_WAITING_GPU) << kbd_->Log();
  const std::string wrong = "Bearer " + std::string(64, '0');
  for (const std::string& auth :
       {std::string(""), std::string("Basic abc"), token_, wrong}) {
    const grpc::StatusCode want = auth == wrong
                                      ? grpc::StatusCode::PERMISSION_DENIED
                                      : grpc::StatusCode::UNAUTHENTICATED;
    v1::LeaseJobResponse lease;
    grpc::Status s = Lease(auth, RogueInfo("rogue:gpu0"), &lease, 500);
    EXPECT_EQ(s.error_code(), want)
        << "'" << auth << "': " << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr(kbd_->worker_token_file()));
    EXPECT_TRUE(lease.job().source().empty());
    EXPECT_TRUE(lease.lease_id().empty());

    v1::HeartbeatRequest hb;
    hb.set_worker_id("rogue:gpu0");
    hb.set_lease_id("l-1-0000000000000000");
    v1::HeartbeatResponse hb_resp;
    EXPECT_EQ(workers_->Heartbeat(Ctx(auth).get(), hb, &hb_resp).error_code(),
              want);

    v1::CompleteJobRequest done;
    done.set_worker_id("rogue:gpu0");
    done.set_lease_id("l-1-0000000000000000");
    done.mutable_result()->set_verdict(v1::VERDICT_PASSED);
    v1::CompleteJobResponse done_resp;
    EXPECT_EQ(
        workers_->CompleteJob(Ctx(auth).get(), done, &done_resp).error_code(),
        want);
  }
  // The job was never handed out, and the rogue was never registered.
  const v1::Job job = GetJob(victim.id());
  EXPECT_EQ(job.stage(), v1::STAGE_WAITING_GPU) << job.stage_detail();
  EXPECT_EQ(job.attempts(), 0);
  v1::GetGpuSpecsResponse specs;
  ASSERT_TRUE(kbench_->GetGpuSpecs(Ctx("").get(), {}, &specs).ok());
  for (const v1::WorkerGpu& g : specs.gpus()) {
    EXPECT_NE(g.worker_id(), "rogue:gpu0");
  }
}

TEST_F(WorkerAuthTest, ToolCallsNeedNoToken) {
  v1::ListProblemsResponse problems;
  ASSERT_TRUE(kbench_->ListProblems(Ctx("").get(), {}, &problems).ok());
  EXPECT_GT(problems.problems_size(), 0);
  std::string why;
  EXPECT_TRUE(CompileOk(&why)) << why;
}

TEST_F(WorkerAuthTest, AWorkerCannotForgeAVerdictItsReportContradicts) {
  // A worker with the token, but lying: it waits for a lease...
  v1::LeaseJobResponse lease;
  grpc::Status leased;
  std::thread poll(
      [&] { leased = Lease(Bearer(), RogueInfo("liar:gpu0"), &lease, 20000); });
  absl::SleepFor(absl::Milliseconds(300));
  const v1::Job victim = SubmitJob(v1::JOB_KIND_SUBMIT, Kernel());
  poll.join();
  ASSERT_TRUE(leased.ok()) << leased.error_message();
  ASSERT_EQ(lease.job().job_id(), victim.id()) << kbd_->Log();

  // A CompleteJob without the token changes nothing.
  v1::CompleteJobRequest req;
  req.set_worker_id("liar:gpu0");
  req.set_lease_id(lease.lease_id());
  v1::JobResult* r = req.mutable_result();
  r->set_verdict(v1::VERDICT_PASSED);
  r->mutable_gpu()->set_name("NVIDIA B300 (made up)");
  r->mutable_gpu()->set_arch("sm_90");
  r->mutable_correctness()->set_passed(true);
  r->mutable_timing()->set_speedup(1000);
  v1::CompleteJobResponse resp;
  EXPECT_EQ(workers_->CompleteJob(Ctx("").get(), req, &resp).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(GetJob(victim.id()).stage(), v1::STAGE_RUNNING);

  // With the token: kbd checks the result and refuses the forgery.
  const grpc::Status s = workers_->CompleteJob(Ctx(Bearer()).get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("NVIDIA B300"));
  const v1::Job job = WaitDone(victim.id(), absl::Seconds(10));
  ASSERT_EQ(job.stage(), v1::STAGE_DONE);
  EXPECT_EQ(job.result().verdict(), v1::VERDICT_ERROR);
  EXPECT_EQ(job.result().error().code(),
            static_cast<int>(grpc::StatusCode::INTERNAL));
  EXPECT_THAT(job.result().message(),
              HasSubstr("liar:gpu0 sent an inconsistent result"));
  EXPECT_FALSE(job.result().has_timing());
  EXPECT_NE(job.result().timing().speedup(), 1000);
  EXPECT_THAT(kbd_->Log(), HasSubstr("worker liar:gpu0 sent an inconsistent"));

  // A second completion of the same lease is refused too.
  req.mutable_result()->mutable_gpu()->set_name("Rogue GPU");
  EXPECT_EQ(workers_->CompleteJob(Ctx(Bearer()).get(), req, &resp).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(GetJob(victim.id()).result().verdict(), v1::VERDICT_ERROR);
}

TEST_F(WorkerAuthTest, FakeSpecsCannotBreakCompiles) {
  auto worker = StartWorker(kbd_->address(), BinDir() + "/kb_fake_runner", 0,
                            {"--worker-id", "honest:gpu0"});
  ASSERT_TRUE(worker.ok());
  WaitForWorkers(1);
  v1::WorkerInfo tiny = RogueInfo("rogue:gpu0");
  tiny.mutable_spec()->set_max_threads_per_block(1);
  v1::LeaseJobResponse lease;
  // Without the token: refused before the spec is looked at.
  EXPECT_EQ(Lease("", tiny, &lease).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  // With it: a limit no GPU has is refused.
  grpc::Status s = Lease(Bearer(), tiny, &lease);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("max_threads_per_block"));
  // A plausible but smaller GPU under the honest worker's id: the live id
  // keeps the GPU it registered with.
  v1::WorkerInfo impostor = RogueInfo("honest:gpu0");
  impostor.mutable_spec()->set_max_threads_per_block(64);
  s = Lease(Bearer(), impostor, &lease);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("--worker-id"));
  std::string why;
  EXPECT_TRUE(CompileOk(&why)) << why << "\n" << kbd_->Log();
  v1::GetGpuSpecsResponse specs;
  ASSERT_TRUE(kbench_->GetGpuSpecs(Ctx("").get(), {}, &specs).ok());
  ASSERT_EQ(specs.gpus_size(), 1);
  EXPECT_EQ(specs.gpus(0).spec().max_threads_per_block(), 1024);
}

// A kbworker of another build would misread RunnerJob: refused with the
// two versions named (InvalidArgument, so kbworker stops instead of
// retrying), before it is listed or leased anything.
TEST_F(WorkerAuthTest, AWorkerOfAnotherBuildIsRefused) {
  v1::WorkerInfo old = RogueInfo("old:gpu0");
  old.set_version("0.0.9");
  v1::LeaseJobResponse lease;
  const grpc::Status s = Lease(Bearer(), old, &lease);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("'0.0.9'"));
  EXPECT_THAT(s.error_message(), HasSubstr(KBENCH_VERSION));
  EXPECT_TRUE(lease.lease_id().empty());
  // Not registered: kbd still has no GPU worker.
  ExpectNoWorkerRegistered();
}

// Links to other GPUs come from the worker, so a rogue one may claim
// anything: a link to itself, the same GPU twice, a flood of links or an
// impossible bandwidth. Each is refused at the worker API, nothing is
// registered, and kbd keeps serving.
TEST_F(WorkerAuthTest, ForgedGpuLinksAreRefused) {
  const std::vector<
      std::pair<std::string, std::function<void(v1::WorkerInfo*)>>>
      forgeries = {
          {"not this one's 0",
           [](v1::WorkerInfo* i) { i->add_links()->set_peer_gpu_index(0); }},
          {"once",
           [](v1::WorkerInfo* i) {
             i->add_links()->set_peer_gpu_index(1);
             i->add_links()->set_peer_gpu_index(1);
           }},
          {"at most 64",
           [](v1::WorkerInfo* i) {
             for (int p = 1; p <= 10000; ++p) {
               i->add_links()->set_peer_gpu_index(p % 1000 + 1);
             }
           }},
          {"copy_gbps", [](v1::WorkerInfo* i) {
             v1::GpuLink* l = i->add_links();
             l->set_peer_gpu_index(1);
             l->set_peer_access(true);
             l->set_copy_gbps(1e300);
           }}};
  for (const auto& [want, forge] : forgeries) {
    v1::WorkerInfo info = RogueInfo("rogue:gpu0");
    forge(&info);
    v1::LeaseJobResponse lease;
    const grpc::Status s = Lease(Bearer(), info, &lease);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << want;
    EXPECT_THAT(s.error_message(), HasSubstr("worker.links")) << want;
    EXPECT_THAT(s.error_message(), HasSubstr(want));
    EXPECT_TRUE(lease.lease_id().empty());
  }
  ExpectNoWorkerRegistered();
}

TEST_F(WorkerAuthTest, HonestWorkerStillPassesEndToEnd) {
  auto worker = StartWorker(kbd_->address(), BinDir() + "/kb_fake_runner");
  ASSERT_TRUE(worker.ok());
  WaitForWorkers(1);
  v1::SubmitKernelRequest req;
  req.mutable_kernel()->set_source(Kernel());
  v1::SubmitKernelResponse resp;
  const grpc::Status s = kbench_->SubmitKernel(Ctx("", 60).get(), req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << kbd_->Log();
  EXPECT_EQ(resp.result().verdict(), v1::VERDICT_PASSED)
      << resp.result().message();
  EXPECT_DOUBLE_EQ(resp.result().timing().speedup(), 2.0);
  EXPECT_EQ(resp.result().gpu().arch(), "sm_90");
  v1::RunCorrectnessRequest creq;
  creq.mutable_kernel()->set_source(Kernel("FAKE_FAIL"));
  v1::RunCorrectnessResponse cresp;
  ASSERT_TRUE(kbench_->RunCorrectness(Ctx("", 60).get(), creq, &cresp).ok());
  EXPECT_EQ(cresp.result().verdict(), v1::VERDICT_FAILED);
}

TEST_F(WorkerAuthTest, GpuJobForAnArchNoWorkerHasIsRefused) {
  auto worker = StartWorker(kbd_->address(), BinDir() + "/kb_fake_runner");
  ASSERT_TRUE(worker.ok());
  WaitForWorkers(1);
  v1::RunCorrectnessRequest req;
  req.mutable_kernel()->set_source(Kernel());
  req.mutable_kernel()->set_arch("sm_80");
  v1::RunCorrectnessResponse resp;
  const grpc::Status s = kbench_->RunCorrectness(Ctx("", 60).get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("sm_80"));
  EXPECT_THAT(s.error_message(), HasSubstr("sm_90 (1 worker)"));
  // Compiling for another arch needs no worker of it.
  v1::CompileKernelRequest creq;
  creq.mutable_kernel()->set_source(Kernel());
  creq.mutable_kernel()->set_arch("sm_80");
  v1::CompileKernelResponse cresp;
  ASSERT_TRUE(kbench_->CompileKernel(Ctx("", 60).get(), creq, &cresp).ok());
  EXPECT_TRUE(cresp.compile().success());
  EXPECT_EQ(cresp.compile().arch(), "sm_80");
}

TEST(WorkerAuthStartTest, KbdRefusesATokenFileOthersCanRead) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  ASSERT_EQ(mkdir(data.c_str(), 0700), 0);
  const std::string token = data + "/worker.token";
  std::ofstream(token) << std::string(64, 'a') << "\n";
  ASSERT_EQ(chmod(token.c_str(), 0644), 0);
  auto kbd = KbdProcess::Start({{}, data});
  ASSERT_FALSE(kbd.ok());
  EXPECT_THAT(kbd.status().message(), HasSubstr("chmod 600 " + token));
  // An explicit token file that does not exist is refused, not created.
  auto missing = KbdProcess::Start(
      {{"--worker-token-file=" + dir.path() + "/none.token"}, ""});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("none.token"));
  EXPECT_NE(access((dir.path() + "/none.token").c_str(), F_OK), 0);
}

TEST(WorkerAuthStartTest, ExplicitTokenFileIsUsed) {
  TempDir dir;
  const std::string token_file = dir.path() + "/my.token";
  const std::string token(48, 'k');
  std::ofstream(token_file) << token;
  ASSERT_EQ(chmod(token_file.c_str(), 0600), 0);
  auto kbd = KbdProcess::Start({{"--worker-token-file", token_file}, ""});
  ASSERT_TRUE(kbd.ok()) << kbd.status();
  EXPECT_EQ((*kbd)->worker_token_file(), token_file);
  auto stub = v1::WorkerService::NewStub(grpc::CreateChannel(
      (*kbd)->address(), grpc::InsecureChannelCredentials()));
  v1::LeaseJobRequest req;
  *req.mutable_worker() = RogueInfo("w:gpu0");
  v1::LeaseJobResponse resp;
  grpc::ClientContext ok_ctx;
  ok_ctx.AddMetadata("authorization", "Bearer " + token);
  EXPECT_TRUE(stub->LeaseJob(&ok_ctx, req, &resp).ok());
  // The default file is not created.
  EXPECT_NE(access(((*kbd)->data_dir() + "/worker.token").c_str(), F_OK), 0);
  // The honest worker finds the file through StartWorker.
  auto worker = StartWorker((*kbd)->address(), BinDir() + "/kb_fake_runner");
  ASSERT_TRUE(worker.ok());
  auto kstub = v1::Kbench::NewStub(grpc::CreateChannel(
      (*kbd)->address(), grpc::InsecureChannelCredentials()));
  bool seen = false;
  for (int i = 0; i < 200 && !seen; ++i) {
    grpc::ClientContext ctx;
    v1::GetGpuSpecsResponse specs;
    if (kstub->GetGpuSpecs(&ctx, {}, &specs).ok()) {
      for (const v1::WorkerGpu& g : specs.gpus()) {
        seen = seen || g.spec().name() == "kbench fake GPU (tests only)";
      }
    }
    if (!seen) absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_TRUE(seen) << (*kbd)->Log() << (*worker)->Stderr();
}

}  // namespace
}  // namespace kbench
