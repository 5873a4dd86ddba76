// A problem that spans GPUs, through kbd and kbworker with the stand-in
// runner (docs/multi-gpu.md): tests/integration/problems/allgather_fp32
// (world_size 2) in a problems directory beside a one-GPU problem. kbd
// loads it and shows where its tensors live; with one worker of a host it
// waits, saying for what; with two workers of one host (same --host-id) it
// is leased to both as a gang: the leader runs it in a runner that sees
// both GPUs, in rank order, while the other is parked; both then serve
// one-GPU jobs again. A submit of it runs as a gang and is timed, a
// sanitize runs the leader's compute-sanitizer (a stand-in) on both GPUs,
// and a profile runs as a gang, its counters those of rank 0 of 2.
// GPUs without peer access between them are shown so and never ganged.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "testing/eventually.h"
#include "testing/process.h"
#include "tests/integration/kbd_waits.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using ::kbench::testing::BinDir;
using ::kbench::testing::Child;
using ::kbench::testing::Eventually;
using ::kbench::testing::KbdProcess;
using ::kbench::testing::ReadSourceFile;
using ::kbench::testing::SourcePath;
using ::kbench::testing::StartWorker;
using ::testing::HasSubstr;

class GangLeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path root = dir_.path();
    const fs::path problems = root / "problems";
    fs::create_directories(problems);
    fs::copy(SourcePath("kernels/examples"), root / "examples");
    fs::copy(SourcePath("kernels/problems/gather_linear_fp32"),
             problems / "gather_linear_fp32");
    fs::copy(SourcePath("tests/integration/problems/allgather_fp32"),
             problems / "allgather_fp32");
    auto kbd = KbdProcess::Start(
        {{"--problems-dir", problems.string(), "--lease-ttl-ms=1500"}, ""});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = std::move(*kbd);
    stub_ = v1::Kbench::NewStub(grpc::CreateChannel(
        kbd_->address(), grpc::InsecureChannelCredentials()));
  }
  void TearDown() override { unsetenv("KB_FAKE_TOPOLOGY"); }
  // A worker of GPU `gpu` on host "node-1". Its stand-in runner reports
  // the links `topology` lists (KB_FAKE_TOPOLOGY: GPUs 0 and 1 reach each
  // other by default).
  std::unique_ptr<Child> Worker(int gpu, const std::string& topology = "0,1") {
    setenv("KB_FAKE_TOPOLOGY", topology.c_str(), 1);
    auto w = StartWorker(
        kbd_->address(), BinDir() + "/kb_fake_runner", gpu,
        {"--worker-id", absl::StrCat("node-1:gpu", gpu), "--host-id", "node-1",
         "--compute-sanitizer", Sanitizer()});
    EXPECT_TRUE(w.ok()) << w.status();
    return w.ok() ? std::move(*w) : nullptr;
  }
  void WaitForWorkers(int n) {
    ASSERT_TRUE(testing::WaitForGpus(stub_.get(), n, absl::Seconds(10)))
        << "workers did not connect; kbd log:\n"
        << kbd_->Log();
  }
  std::string Submit(const std::string& problem, const std::string& source,
                     v1::JobKind kind = v1::JOB_KIND_CORRECTNESS) {
    v1::SubmitJobRequest req;
    req.set_kind(kind);
    req.mutable_kernel()->set_problem(problem);
    req.mutable_kernel()->set_source(source);
    v1::SubmitJobResponse resp;
    grpc::ClientContext ctx;
    const grpc::Status s = stub_->SubmitJob(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.job().id();
  }
  v1::Job Get(const std::string& id) {
    v1::GetJobRequest req;
    req.set_job_id(id);
    v1::GetJobResponse resp;
    grpc::ClientContext ctx;
    EXPECT_TRUE(stub_->GetJob(&ctx, req, &resp).ok());
    return resp.job();
  }
  // Polls until `done` holds for the job, up to `timeout`.
  template <typename Pred>
  v1::Job WaitFor(const std::string& id, Pred done,
                  absl::Duration timeout = absl::Seconds(30)) {
    const absl::Time deadline = absl::Now() + timeout;
    v1::Job job = Get(id);
    while (!done(job) && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(20));
      job = Get(id);
    }
    return job;
  }
  // Submits the fixture's example as a `kind` job and waits for its end.
  v1::Job RunExample(v1::JobKind kind) {
    const std::string id = Submit("allgather_fp32", Example(), kind);
    return WaitFor(
        id, [](const v1::Job& j) { return j.stage() == v1::STAGE_DONE; });
  }
  // A stand-in compute-sanitizer: notes the GPUs it was given in
  // `visible`, writes a clean log and an empty result, exits 0.
  std::string Sanitizer() {
    std::string script = dir_.path() + "/compute-sanitizer";
    if (!fs::exists(script)) {
      std::ofstream out(script);
      out << "#!/bin/sh\nlog=/dev/null\n"
          << "while [ $# -gt 0 ]; do case \"$1\" in --log-file) log=$2;; "
             "--oneshot) res=$3;; esac; shift; done\n"
          << "echo \"$CUDA_VISIBLE_DEVICES\" >> " << dir_.path() << "/visible\n"
          << ": > \"$res\"\n"
          << "echo '========= ERROR SUMMARY: 0 errors' > \"$log\"\n";
      out.close();
      fs::permissions(script, fs::perms::owner_all);
    }
    return script;
  }
  std::string Example() {
    return ReadSourceFile(
        "tests/integration/problems/allgather_fp32/example.cu");
  }

  testing::TempDir dir_;
  std::unique_ptr<KbdProcess> kbd_;
  std::unique_ptr<v1::Kbench::Stub> stub_;
};

TEST_F(GangLeaseTest, TheProblemShowsWhereItsTensorsLive) {
  v1::GetProblemRequest req;
  req.set_name("allgather_fp32");
  v1::GetProblemResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub_->GetProblem(&ctx, req, &resp).ok());
  EXPECT_EQ(resp.problem().world_size(), 2);
  EXPECT_THAT(resp.contract(), HasSubstr("x (N) fp32, shard r on GPU r;"));
  EXPECT_THAT(resp.contract(), HasSubstr("out (2*N) fp32, on every GPU"));
  EXPECT_THAT(resp.contract(), HasSubstr("Spans 2 GPUs of one host"));
}

TEST_F(GangLeaseTest, PeerArgumentsAreCheckedAtEveryRank) {
  auto gpu0 = Worker(0);
  WaitForWorkers(1);
  // Rank 1 would name rank 2, which does not exist: refused before any
  // GPU is held, with the rank it fails at, for every kind of job.
  for (v1::JobKind kind : {v1::JOB_KIND_CORRECTNESS, v1::JOB_KIND_SUBMIT,
                           v1::JOB_KIND_PROFILE, v1::JOB_KIND_SANITIZE}) {
    v1::SubmitJobRequest req;
    req.set_kind(kind);
    req.mutable_kernel()->set_problem("allgather_fp32");
    req.mutable_kernel()->set_source(
        "// @kb launch g grid(N) block(1) args(peer(x, rank + 1), out, N)\n"
        "extern \"C\" __global__ void g(const float* x, float* out, int N) "
        "{}\n");
    v1::SubmitJobResponse resp;
    grpc::ClientContext ctx;
    const grpc::Status s = stub_->SubmitJob(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << v1::JobKind_Name(kind);
    EXPECT_THAT(s.error_message(), HasSubstr("rank=1 world_size=2"));
    EXPECT_THAT(s.error_message(), HasSubstr("% world_size"));
  }
  // Wrapped, it is queued (for a gang).
  const std::string id = Submit(
      "allgather_fp32",
      "// @kb launch g grid(N) block(1) "
      "args(peer(x, (rank + 1) % world_size), out, N)\n"
      "extern \"C\" __global__ void g(const float* x, float* out, int N) "
      "{}\n");
  EXPECT_FALSE(id.empty());
}

TEST_F(GangLeaseTest, AGangJobWaitsForTwoGpusOfOneHostThenRunsOnBoth) {
  auto gpu1 = Worker(1);
  WaitForWorkers(1);
  const std::string id = Submit("allgather_fp32", Example());
  // One GPU of the host is connected: the job says what it waits for.
  v1::Job waiting = WaitFor(id, [](const v1::Job& j) {
    return absl::StrContains(j.stage_detail(), "waiting for a host with 2");
  });
  EXPECT_EQ(waiting.stage(), v1::STAGE_WAITING_GPU) << waiting.DebugString();
  EXPECT_THAT(waiting.stage_detail(), HasSubstr("the most on one host now: 1"));

  auto gpu0 = Worker(0);
  const v1::Job done =
      WaitFor(id, [](const v1::Job& j) { return j.stage() == v1::STAGE_DONE; });
  ASSERT_EQ(done.stage(), v1::STAGE_DONE) << done.DebugString();
  // The leader is the lowest GPU index; its runner saw both GPUs (the
  // stand-in runner says what it was given).
  EXPECT_EQ(done.worker_id(), "node-1:gpu0");
  EXPECT_THAT(done.gang_worker_ids(),
              ::testing::ElementsAre("node-1:gpu0", "node-1:gpu1"));
  {
    // The dashboard's job API shows every rank's worker.
    httplib::Client http("http://" + kbd_->http_address());
    const httplib::Result res = http.Get("/api/jobs/" + id);
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    EXPECT_EQ(res->status, 200) << res->body;
    const nlohmann::json body =
        nlohmann::json::parse(res->body, nullptr,
                              /*allow_exceptions=*/false);
    ASSERT_FALSE(body.is_discarded()) << res->body;
    EXPECT_EQ(body["job"]["gang_worker_ids"],
              nlohmann::json({"node-1:gpu0", "node-1:gpu1"}))
        << res->body;
  }
  EXPECT_EQ(done.result().verdict(), v1::VERDICT_PASSED)
      << done.result().message();
  EXPECT_EQ(done.result().message(),
            "2 ranks (fake) on CUDA_VISIBLE_DEVICES=0,1");
  EXPECT_THAT(gpu1->Stderr(), HasSubstr("parked in the gang of job " + id));
  // Its next heartbeat (one a second) tells the parked worker.
  EXPECT_TRUE(Eventually(
      [&] { return absl::StrContains(gpu1->Stderr(), "gang lease"); },
      absl::Seconds(10)))
      << gpu1->Stderr();

  // A submit runs as a gang too, and comes back timed.
  const v1::Job timed = RunExample(v1::JOB_KIND_SUBMIT);
  ASSERT_EQ(timed.stage(), v1::STAGE_DONE) << timed.DebugString();
  EXPECT_EQ(timed.result().verdict(), v1::VERDICT_PASSED)
      << timed.result().message();
  EXPECT_EQ(timed.result().message(),
            "2 ranks (fake) on CUDA_VISIBLE_DEVICES=0,1");
  EXPECT_GT(timed.result().timing().kernel().n(), 0);
  // Each rank's own span, which kbd checked against the joined one.
  ASSERT_EQ(timed.result().timing().ranks_size(), 2);
  EXPECT_EQ(timed.result().timing().ranks(1).rank(), 1);
  EXPECT_GT(timed.result().timing().ranks(1).kernel().n(), 0);

  // A sanitize runs as a gang: the leader's compute-sanitizer (a stand-in
  // here) is given both GPUs, once per tool.
  const v1::Job clean = RunExample(v1::JOB_KIND_SANITIZE);
  ASSERT_EQ(clean.stage(), v1::STAGE_DONE) << clean.DebugString();
  EXPECT_EQ(clean.worker_id(), "node-1:gpu0");
  EXPECT_EQ(clean.result().verdict(), v1::VERDICT_PASSED)
      << clean.result().message();
  EXPECT_EQ(clean.result().sanitize().runs_size(), 3);
  {
    std::ifstream visible(dir_.path() + "/visible");
    std::string line;
    int runs = 0;
    while (std::getline(visible, line)) {
      EXPECT_EQ(line, "0,1");
      ++runs;
    }
    EXPECT_EQ(runs, 3);
  }

  // A profile runs as a gang too: timed on both GPUs, counted on rank 0.
  const v1::Job counted = RunExample(v1::JOB_KIND_PROFILE);
  ASSERT_EQ(counted.stage(), v1::STAGE_DONE) << counted.DebugString();
  EXPECT_EQ(counted.result().message(),
            "2 ranks (fake) on CUDA_VISIBLE_DEVICES=0,1");
  EXPECT_EQ(counted.gang_worker_ids_size(), 2);
  EXPECT_EQ(counted.result().profile().rank(), 0);
  EXPECT_EQ(counted.result().profile().world_size(), 2);
  EXPECT_GT(counted.result().profile().timing().kernel().n(), 0);

  // Both serve one-GPU jobs again.
  const std::string example =
      ReadSourceFile("kernels/examples/gather_linear_naive.cu");
  const std::string a = Submit("gather_linear_fp32", example);
  const std::string b = Submit("gather_linear_fp32", example);
  for (const std::string& j : {a, b}) {
    const v1::Job one = WaitFor(
        j, [](const v1::Job& x) { return x.stage() == v1::STAGE_DONE; });
    EXPECT_EQ(one.result().verdict(), v1::VERDICT_PASSED) << one.DebugString();
    EXPECT_TRUE(one.gang_worker_ids().empty());
  }
}

TEST_F(GangLeaseTest, GpusThatDoNotReachEachOtherAreShownAndNeverGanged) {
  auto gpu0 = Worker(0, "0!,1!");
  auto gpu1 = Worker(1, "0!,1!");
  WaitForWorkers(2);
  // Each GPU's measured links are shown to clients.
  v1::GetGpuSpecsResponse specs;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(
        stub_->GetGpuSpecs(&ctx, v1::GetGpuSpecsRequest(), &specs).ok());
  }
  ASSERT_EQ(specs.gpus_size(), 2);
  ASSERT_EQ(specs.gpus(0).links_size(), 1);
  EXPECT_EQ(specs.gpus(0).links(0).peer_gpu_index(), 1);
  EXPECT_FALSE(specs.gpus(0).links(0).peer_access());
  // Two GPUs of one host, but no peer access: the gang job waits and says
  // why, while one-GPU jobs run on both.
  const std::string id = Submit("allgather_fp32", Example());
  const v1::Job waiting = WaitFor(id, [](const v1::Job& j) {
    return absl::StrContains(j.stage_detail(), "all reach each other");
  });
  EXPECT_EQ(waiting.stage(), v1::STAGE_WAITING_GPU);
  EXPECT_THAT(waiting.stage_detail(),
              HasSubstr("the most on one host now: 2, but no 2 of them all "
                        "reach each other with peer access"));
  const std::string one =
      Submit("gather_linear_fp32",
             ReadSourceFile("kernels/examples/gather_linear_naive.cu"));
  const v1::Job passed = WaitFor(
      one, [](const v1::Job& j) { return j.stage() == v1::STAGE_DONE; });
  EXPECT_EQ(passed.result().verdict(), v1::VERDICT_PASSED);
  EXPECT_EQ(Get(id).stage(), v1::STAGE_WAITING_GPU);
}

}  // namespace
}  // namespace kbench
