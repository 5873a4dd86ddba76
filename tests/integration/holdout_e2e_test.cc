// Hidden cases end to end, as a client and an attacker see them: a real kbd
// with kbworker and the stand-in runner (kb_fake_runner, which reports every
// trial with its dims and seed, as an honest runner would before kbd
// redacts). A submission over HTTP and gRPC runs every size class; what
// comes back (tool replies, GetJob, ListJobs, kbd's log and, after it
// stops, its store files) holds no hidden dims or seed and never the holdout
// secret. run_correctness's `random` set comes back with its dims, drawn
// afresh per call. kbd refuses an operator's secret file that others may
// read.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "testing/process.h"

namespace kbench {
namespace {

using ::kbench::testing::BinDir;
using ::kbench::testing::Child;
using ::kbench::testing::KbdProcess;
using ::kbench::testing::ReadSourceFile;
using ::kbench::testing::StartWorker;
using nlohmann::json;

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class HoldoutE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kbd = KbdProcess::Start({});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = std::move(*kbd);
    auto worker = StartWorker(kbd_->address(), BinDir() + "/kb_fake_runner");
    ASSERT_TRUE(worker.ok()) << worker.status();
    worker_ = std::move(*worker);
    stub_ = v1::Kbench::NewStub(grpc::CreateChannel(
        kbd_->address(), grpc::InsecureChannelCredentials()));
    for (int i = 0; i < 400; ++i) {
      v1::GetGpuSpecsRequest req;
      v1::GetGpuSpecsResponse resp;
      grpc::ClientContext ctx;
      if (stub_->GetGpuSpecs(&ctx, req, &resp).ok() && resp.gpus_size() > 0) {
        return;
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    FAIL() << "the worker did not connect; kbd log:\n" << kbd_->Log();
  }

  v1::KernelRequest Kernel(const std::string& session) {
    v1::KernelRequest k;
    k.set_source(ReadSourceFile("kernels/examples/gather_linear_naive.cu"));
    k.set_session_id(session);
    return k;
  }

  std::string Secret() const {
    return std::string(absl::StripAsciiWhitespace(
        ReadBytes(kbd_->data_dir() + "/holdout.secret")));
  }

  std::unique_ptr<KbdProcess> kbd_;
  std::unique_ptr<Child> worker_;
  std::unique_ptr<v1::Kbench::Stub> stub_;
};

TEST_F(HoldoutE2eTest, ASubmissionShowsItsClassesButNoCaseAndNeverTheSecret) {
  const std::string secret = Secret();
  ASSERT_GE(secret.size(), 32u);
  struct stat st;
  ASSERT_EQ(stat((kbd_->data_dir() + "/holdout.secret").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);

  // gRPC submit, then the job as GetJob and ListJobs show it.
  v1::SubmitKernelRequest req;
  *req.mutable_kernel() = Kernel("holdout-e2e");
  v1::SubmitKernelResponse resp;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->SubmitKernel(&ctx, req, &resp).ok());
  }
  const v1::JobResult& r = resp.result();
  EXPECT_EQ(r.verdict(), v1::VERDICT_PASSED) << r.message();
  std::set<std::string> classes;
  int visible = 0;
  for (const v1::TrialResult& t : r.correctness().trials()) {
    if (absl::StartsWith(t.shape_set(), "hidden")) {
      classes.insert(t.shape_set());
      EXPECT_TRUE(t.hidden());
      EXPECT_TRUE(t.dims().empty()) << t.DebugString();
      EXPECT_EQ(t.seed(), 0u);
      EXPECT_EQ(t.shape(), "");
    } else {
      ++visible;
      EXPECT_EQ(t.dims().size(), 4u);  // Public shapes keep theirs.
    }
  }
  EXPECT_EQ(classes, (std::set<std::string>{"hidden:small", "hidden:mid",
                                            "hidden:large"}));
  EXPECT_EQ(visible, 6);  // default + odd.
  std::string seen = resp.DebugString();
  {
    v1::GetJobRequest get;
    get.set_job_id(resp.job_id());
    v1::GetJobResponse got;
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->GetJob(&ctx, get, &got).ok());
    seen += got.DebugString();
    for (const v1::TrialResult& t : got.job().result().correctness().trials()) {
      if (t.hidden()) {
        EXPECT_TRUE(t.dims().empty());
      }
    }
  }
  {
    v1::ListJobsRequest list;
    v1::ListJobsResponse jobs;
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->ListJobs(&ctx, list, &jobs).ok());
    seen += jobs.DebugString();
  }
  // The same over HTTP, as an agent's tool call.
  httplib::Client http("http://" + kbd_->http_address());
  http.set_read_timeout(120);
  httplib::Result res = http.Post(
      "/v1/tools/submit_kernel",
      json{{"kernel_code", Kernel("").source()}}.dump(), "application/json");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_TRUE(absl::StrContains(res->body, "hidden")) << res->body;
  seen += res->body;
  httplib::Result problem = http.Post(
      "/v1/tools/get_problem", json::object().dump(), "application/json");
  ASSERT_TRUE(problem);
  EXPECT_TRUE(absl::StrContains(problem->body, "by class")) << problem->body;
  seen += problem->body;

  EXPECT_FALSE(absl::StrContains(seen, secret)) << "the secret was shown";
  EXPECT_FALSE(absl::StrContains(kbd_->Log(), secret)) << "in kbd's log";
  EXPECT_FALSE(absl::StrContains(worker_->Stderr(), secret))
      << "in the worker's log";
  // kbd's store, read as bytes after it stops.
  kbd_->Stop();
  for (const char* f : {"/kbench.db", "/kbench.db-wal"}) {
    EXPECT_FALSE(absl::StrContains(ReadBytes(kbd_->data_dir() + f), secret))
        << "in " << f;
  }
}

TEST_F(HoldoutE2eTest, TheRandomSetIsDrawnAfreshAndShowsItsDims) {
  std::set<std::string> draws;
  for (int i = 0; i < 2; ++i) {
    v1::RunCorrectnessRequest req;
    *req.mutable_kernel() = Kernel("holdout-random");
    req.mutable_kernel()->set_shape_set("random");
    v1::RunCorrectnessResponse resp;
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->RunCorrectness(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.result().verdict(), v1::VERDICT_PASSED)
        << resp.result().message();
    std::string dims;
    ASSERT_EQ(resp.result().correctness().trials_size(), 7);  // 4 + 2 + 1.
    for (const v1::TrialResult& t : resp.result().correctness().trials()) {
      EXPECT_EQ(t.shape_set(), "random");
      EXPECT_FALSE(t.hidden());
      EXPECT_EQ(t.dims().size(), 4u);
      for (const char* d : {"R", "B", "H", "K"}) {
        absl::StrAppend(&dims, t.dims().at(d), ",");
      }
    }
    draws.insert(dims);
  }
  EXPECT_EQ(draws.size(), 2u) << "two calls drew the same cases";
  // Only run_correctness takes it.
  v1::SubmitKernelRequest submit;
  *submit.mutable_kernel() = Kernel("holdout-random");
  submit.mutable_kernel()->set_shape_set("random");
  v1::SubmitKernelResponse resp;
  grpc::ClientContext ctx;
  const grpc::Status s = stub_->SubmitKernel(&ctx, submit, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "only run_correctness"))
      << s.error_message();
}

TEST(HoldoutSecretFileTest, KbdRefusesASecretOthersMayRead) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/op.secret";
  std::ofstream(path) << std::string(64, 'a') << "\n";
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  const std::vector<std::string> argv = {
      BinDir() + "/kbd", "--listen=127.0.0.1:0", "--http-listen=off",
      "--data-dir=" + dir.path() + "/data", "--holdout-secret-file=" + path};
  const testing::CommandResult r = testing::RunCommand(argv);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r.err, "chmod 600")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "holdout secret")) << r.err;
  EXPECT_FALSE(absl::StrContains(r.err, std::string(64, 'a')));
}

}  // namespace
}  // namespace kbench
