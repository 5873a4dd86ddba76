// The red-team suite of issue 4, on a real GPU: one kbd with one local GPU
// worker for the whole suite; each adversarial kernel of
// tests/adversarial/kernels/ is sent as an agent would send it (submit_kernel
// where timing is what it games, run_correctness otherwise) and must get
// the verdict and message of the table in tests/adversarial/README.md.
// After every case the same worker must still pass the naive example.
// Skips without an NVIDIA GPU.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "testing/process.h"
#include "tests/adversarial/redteam_cases.h"

namespace kbench {
namespace {

using ::kbench::redteam::Case;
using ::kbench::testing::KbdProcess;

class RedTeamTest : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() {
    if (!testing::HasGpu()) return;
    std::vector<std::string> args = {"--local-worker=1"};
    // A short CPU limit, so the compile bomb is stopped quickly.
    args.push_back("--compile-cpu-limit-s=20");
    auto kbd = KbdProcess::Start({args, ""});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = kbd->release();
    stub_ = v1::Kbench::NewStub(
                grpc::CreateChannel(kbd_->address(),
                                    grpc::InsecureChannelCredentials()))
                .release();
    // Wait for the local worker (runner start creates the CUDA context).
    for (int i = 0; i < 600; ++i) {
      v1::GetGpuSpecsRequest req;
      v1::GetGpuSpecsResponse resp;
      grpc::ClientContext ctx;
      if (stub_->GetGpuSpecs(&ctx, req, &resp).ok() && resp.gpus_size() > 0) {
        worker_id_ = new std::string(resp.gpus(0).worker_id());
        return;
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
    FAIL() << "the local worker did not connect; kbd log:\n" << kbd_->Log();
  }
  static void TearDownTestSuite() {
    delete stub_;
    delete kbd_;
    delete worker_id_;
    stub_ = nullptr;
    kbd_ = nullptr;
    worker_id_ = nullptr;
  }
  void SetUp() override {
    KB_SKIP_WITHOUT_GPU();
    ASSERT_NE(stub_, nullptr) << "kbd did not start";
    ASSERT_NE(worker_id_, nullptr) << "no GPU worker connected";
  }

  // The naive example, submitted right after a case: it must pass, timed,
  // on the same worker (the worker survived; a crashed runner was
  // replaced).
  static void ExpectWorkerStillServes(const std::string& after) {
    v1::SubmitKernelRequest req;
    req.mutable_kernel()->set_source(
        testing::ReadSourceFile("kernels/examples/gather_linear_naive.cu"));
    req.mutable_kernel()->set_filename("gather_linear_naive.cu");
    v1::SubmitKernelResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(redteam::Deadline(180));
    const grpc::Status s = stub_->SubmitKernel(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << "after " << after << ": " << s.error_message();
    EXPECT_EQ(v1::Verdict_Name(resp.result().verdict()),
              v1::Verdict_Name(v1::VERDICT_PASSED))
        << "after " << after << ": " << resp.result().message();
    EXPECT_EQ(resp.result().worker_id(), *worker_id_)
        << "after " << after << " the job ran on another worker";
  }

  static KbdProcess* kbd_;
  static v1::Kbench::Stub* stub_;
  static std::string* worker_id_;
};

KbdProcess* RedTeamTest::kbd_ = nullptr;
v1::Kbench::Stub* RedTeamTest::stub_ = nullptr;
std::string* RedTeamTest::worker_id_ = nullptr;

TEST_P(RedTeamTest, GetsItsVerdictAndTheWorkerSurvives) {
  const Case& c = GetParam();
  const redteam::Outcome o = redteam::RunTool(
      stub_, c.tool,
      redteam::CaseRequest(c, absl::StrCat("redteam-gpu-", c.name)));
  redteam::ExpectVerdict(c, o, kbd_->Log());
  ExpectWorkerStillServes(c.name);
}

INSTANTIATE_TEST_SUITE_P(Adversarial, RedTeamTest,
                         ::testing::ValuesIn(redteam::AllCases()),
                         redteam::CaseName);

}  // namespace
}  // namespace kbench
