// Loopback tests of kbd without a GPU: the compile tool, bad input and its
// statuses, GPU tools without workers, the job API, health and reflection.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "server/store/store.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::kbench::testing::KbdProcess;
using ::kbench::testing::ReadSourceFile;

class KbdToolsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto kbd = KbdProcess::Start({});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = kbd->release();
    channel_ = new std::shared_ptr<grpc::Channel>(grpc::CreateChannel(
        kbd_->address(), grpc::InsecureChannelCredentials()));
  }
  static void TearDownTestSuite() {
    delete channel_;
    delete kbd_;
  }
  void SetUp() override { stub_ = v1::Kbench::NewStub(*channel_); }

  static v1::KernelRequest Kernel(const std::string& source) {
    v1::KernelRequest k;
    k.set_source(source);
    k.set_filename("kernel.cu");
    return k;
  }
  grpc::Status Compile(const std::string& source,
                       v1::CompileKernelResponse* response,
                       const std::string& problem = "") {
    v1::CompileKernelRequest req;
    *req.mutable_kernel() = Kernel(source);
    req.mutable_kernel()->set_problem(problem);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(30));
    return stub_->CompileKernel(&ctx, req, response);
  }

  static KbdProcess* kbd_;
  static std::shared_ptr<grpc::Channel>* channel_;
  std::unique_ptr<v1::Kbench::Stub> stub_;
};

KbdProcess* KbdToolsTest::kbd_ = nullptr;
std::shared_ptr<grpc::Channel>* KbdToolsTest::channel_ = nullptr;

const char kNaive[] = "kernels/examples/gather_linear_naive.cu";

TEST_F(KbdToolsTest, CompileReportsResourcesAndPlanThenHitsTheCache) {
  const std::string source = ReadSourceFile(kNaive) + "\n// unique 1\n";
  v1::CompileKernelResponse first;
  ASSERT_TRUE(Compile(source, &first).ok());
  EXPECT_FALSE(first.job_id().empty());
  const v1::CompileReport& r = first.compile();
  EXPECT_TRUE(r.success());
  EXPECT_EQ(r.arch(), "sm_90");
  EXPECT_FALSE(r.cached());
  ASSERT_EQ(r.kernels_size(), 1);
  EXPECT_EQ(r.kernels(0).name(), "gather_linear");
  EXPECT_GT(r.kernels(0).registers(), 0);
  EXPECT_GT(r.cubin_bytes(), 0);
  ASSERT_EQ(r.plan().launches_size(), 1);
  EXPECT_EQ(r.plan().launches(0).entry(), "gather_linear");
  EXPECT_EQ(r.digest().size(), 64u);

  v1::CompileKernelResponse second;
  ASSERT_TRUE(Compile(source, &second).ok());
  EXPECT_TRUE(second.compile().cached());
  EXPECT_EQ(second.compile().digest(), r.digest());
  EXPECT_NE(second.job_id(), first.job_id());
}

TEST_F(KbdToolsTest, Bf16ProblemCompiles) {
  v1::CompileKernelResponse resp;
  ASSERT_TRUE(
      Compile(ReadSourceFile("kernels/examples/gather_linear_naive_bf16.cu"),
              &resp)
          .ok());
  EXPECT_TRUE(resp.compile().success());
}

TEST_F(KbdToolsTest, InvalidCudaIsInvalidArgumentWithTheLine) {
  const std::string source =
      "// @kb launch gather_linear grid(B) block(32)\n"
      "extern \"C\" __global__ void gather_linear(const float* x, const float* "
      "w, const float* bias, float* out, int R, int B, int H, int K) {\n"
      "  out[0] = undefined_name;\n"
      "}\n";
  v1::CompileKernelResponse resp;
  const grpc::Status s = Compile(source, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("kernel.cu:3: error:"), std::string::npos)
      << s.error_message();
  EXPECT_NE(s.error_message().find("undefined_name"), std::string::npos);
}

TEST_F(KbdToolsTest, MissingEntryPointIsInvalidArgumentWithAHint) {
  const std::string source =
      "// @kb launch gather_linear grid(B) block(32)\n"
      "__global__ void gather_linear(const float* x, const float* w, const "
      "float* bias, float* out, int R, int B, int H, int K) {}\n";
  v1::CompileKernelResponse resp;
  const grpc::Status s = Compile(source, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("extern \"C\""), std::string::npos)
      << s.error_message();
}

TEST_F(KbdToolsTest, BadLaunchExpressionIsInvalidArgument) {
  std::string source = ReadSourceFile(kNaive);
  const std::string from = "grid(B, cdiv(K, 256))";
  source.replace(source.find(from), from.size(), "grid(B, cdiv(K, ))");
  v1::CompileKernelResponse resp;
  const grpc::Status s = Compile(source, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("line"), std::string::npos)
      << s.error_message();
}

TEST_F(KbdToolsTest, LaunchOverDeviceLimitsIsInvalidArgument) {
  std::string source = ReadSourceFile(kNaive);
  const std::string from = "block(256)";
  source.replace(source.find(from), from.size(), "block(2048)");
  v1::CompileKernelResponse resp;
  const grpc::Status s = Compile(source, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("1024"), std::string::npos)
      << s.error_message();
}

TEST_F(KbdToolsTest, UnknownProblemIsNotFoundListingTheKnownOnes) {
  std::string source = ReadSourceFile(kNaive);
  const std::string from = "// @kb problem gather_linear_fp32\n";
  source.erase(source.find(from), from.size());
  v1::CompileKernelResponse resp;
  const grpc::Status s = Compile(source, &resp, "no_such_problem");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(s.error_message().find("gather_linear_fp32"), std::string::npos)
      << s.error_message();
}

TEST_F(KbdToolsTest, OversizedSourceIsInvalidArgument) {
  const std::string source =
      ReadSourceFile(kNaive) + "\n// " + std::string(300 * 1024, 'x') + "\n";
  v1::CompileKernelResponse resp;
  const grpc::Status s = Compile(source, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("262144"), std::string::npos)
      << s.error_message();
}

TEST_F(KbdToolsTest, GpuToolsWithoutWorkersFailFastWithFailedPrecondition) {
  const absl::Time t0 = absl::Now();
  {
    v1::RunCorrectnessRequest req;
    *req.mutable_kernel() = Kernel(ReadSourceFile(kNaive));
    v1::RunCorrectnessResponse resp;
    grpc::ClientContext ctx;
    const grpc::Status s = stub_->RunCorrectness(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(s.error_message().find("no GPU worker is connected"),
              std::string::npos);
  }
  {
    v1::SubmitKernelRequest req;
    *req.mutable_kernel() = Kernel(ReadSourceFile(kNaive));
    v1::SubmitKernelResponse resp;
    grpc::ClientContext ctx;
    EXPECT_EQ(stub_->SubmitKernel(&ctx, req, &resp).error_code(),
              grpc::StatusCode::FAILED_PRECONDITION);
  }
  {
    v1::ProfileKernelRequest req;
    *req.mutable_kernel() = Kernel(ReadSourceFile(kNaive));
    v1::ProfileKernelResponse resp;
    grpc::ClientContext ctx;
    EXPECT_EQ(stub_->ProfileKernel(&ctx, req, &resp).error_code(),
              grpc::StatusCode::FAILED_PRECONDITION);
  }
  {
    v1::GetGpuSpecsRequest req;
    v1::GetGpuSpecsResponse resp;
    grpc::ClientContext ctx;
    EXPECT_EQ(stub_->GetGpuSpecs(&ctx, req, &resp).error_code(),
              grpc::StatusCode::FAILED_PRECONDITION);
  }
  // "They do not hang": four refusals well inside a generous bound.
  EXPECT_LT(absl::Now() - t0, absl::Seconds(10));
  // And the server keeps serving.
  v1::CompileKernelResponse resp;
  EXPECT_TRUE(Compile(ReadSourceFile(kNaive), &resp).ok());
}

TEST_F(KbdToolsTest, JobApiSubmitWatchGetListCancel) {
  v1::SubmitJobRequest req;
  req.set_kind(v1::JOB_KIND_COMPILE);
  *req.mutable_kernel() = Kernel(ReadSourceFile(kNaive) + "\n// unique 2\n");
  req.mutable_kernel()->set_session_id("s-jobapi");
  v1::SubmitJobResponse submitted;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->SubmitJob(&ctx, req, &submitted).ok());
  }
  const std::string id = submitted.job().id();
  ASSERT_FALSE(id.empty());

  grpc::ClientContext wctx;
  v1::WatchJobRequest wreq;
  wreq.set_job_id(id);
  auto reader = stub_->WatchJob(&wctx, wreq);
  v1::WatchJobResponse update;
  v1::Stage last = v1::STAGE_UNSPECIFIED;
  int updates = 0;
  while (reader->Read(&update)) {
    ++updates;
    EXPECT_GE(update.job().stage(), last);  // Stages only move forward.
    last = update.job().stage();
  }
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_GE(updates, 1);
  EXPECT_EQ(last, v1::STAGE_DONE);

  v1::GetJobRequest greq;
  greq.set_job_id(id);
  greq.set_include_source(true);
  v1::GetJobResponse got;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->GetJob(&ctx, greq, &got).ok());
  }
  EXPECT_EQ(got.job().result().verdict(), v1::VERDICT_PASSED);
  EXPECT_TRUE(got.job().result().compile().success());
  EXPECT_NE(got.source().find("unique 2"), std::string::npos);
  EXPECT_EQ(got.job().session_id(), "s-jobapi");
  EXPECT_GT(got.job().finished_unix_ms(), 0);

  v1::ListJobsRequest lreq;
  lreq.set_session_id("s-jobapi");
  v1::ListJobsResponse listed;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->ListJobs(&ctx, lreq, &listed).ok());
  }
  ASSERT_EQ(listed.jobs_size(), 1);
  EXPECT_EQ(listed.jobs(0).id(), id);

  // Cancelling a finished job leaves it as it is.
  v1::CancelJobRequest creq;
  creq.set_job_id(id);
  v1::CancelJobResponse cancelled;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->CancelJob(&ctx, creq, &cancelled).ok());
  }
  EXPECT_EQ(cancelled.job().result().verdict(), v1::VERDICT_PASSED);

  // Unknown ids are NOT_FOUND everywhere.
  greq.set_job_id("j-nope");
  {
    grpc::ClientContext ctx;
    EXPECT_EQ(stub_->GetJob(&ctx, greq, &got).error_code(),
              grpc::StatusCode::NOT_FOUND);
  }
  {
    grpc::ClientContext ctx;
    wreq.set_job_id("j-nope");
    auto r = stub_->WatchJob(&ctx, wreq);
    while (r->Read(&update)) {
    }
    EXPECT_EQ(r->Finish().error_code(), grpc::StatusCode::NOT_FOUND);
  }
  // A bad page token is INVALID_ARGUMENT.
  lreq.set_page_token("%%%");
  {
    grpc::ClientContext ctx;
    EXPECT_EQ(stub_->ListJobs(&ctx, lreq, &listed).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
  }
}

TEST_F(KbdToolsTest, SessionTurnsAreRecorded) {
  v1::CompileKernelRequest req;
  *req.mutable_kernel() = Kernel(ReadSourceFile(kNaive));
  req.mutable_kernel()->set_session_id("s-turns");
  for (int i = 0; i < 2; ++i) {
    v1::CompileKernelResponse resp;
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->CompileKernel(&ctx, req, &resp).ok());
  }
  // kbd records turns after answering; give it a moment, then read its
  // store (SQLite WAL allows a second reader).
  auto store = Store::Open({kbd_->data_dir() + "/kbench.db"});
  ASSERT_TRUE(store.ok()) << store.status();
  std::vector<v1::Turn> turns;
  for (int i = 0; i < 100 && turns.size() < 2; ++i) {
    turns = (*store)->ListTurns("s-turns").value_or(std::vector<v1::Turn>{});
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0].tool(), "compile_kernel");
  EXPECT_EQ(turns[1].seq(), 2);
  EXPECT_EQ(turns[0].verdict(), v1::VERDICT_PASSED);
  EXPECT_EQ(turns[0].source_digest().size(), 64u);
}

TEST_F(KbdToolsTest, ListProblemsHidesNothingPublicAndNoHiddenSets) {
  v1::ListProblemsRequest req;
  v1::ListProblemsResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub_->ListProblems(&ctx, req, &resp).ok());
  ASSERT_EQ(resp.problems_size(), 2);
  for (const v1::Problem& p : resp.problems()) {
    for (const v1::ShapeSet& s : p.shape_sets()) EXPECT_FALSE(s.hidden());
    EXPECT_FALSE(p.example_source().empty());
  }
}

}  // namespace
}  // namespace kbench
