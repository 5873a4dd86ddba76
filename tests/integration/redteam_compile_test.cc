// The compile-stage rows of the red-team table (tests/adversarial/README.md),
// without a GPU: a kbd with no worker, sent each case with compile_kernel as
// an agent would. A host #include, a template bomb, dynamic parallelism, a
// 10 MB source and a plan over the shared memory limit must all be refused
// before a GPU is needed, and kbd must go on compiling (the naive example
// compiles after every case).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "testing/process.h"
#include "tests/adversarial/redteam_cases.h"

namespace kbench {
namespace {

using ::kbench::redteam::Case;
using ::kbench::testing::KbdProcess;

class RedTeamCompileTest : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() {
    std::vector<std::string> args = {"--http-listen=off"};
    // A short CPU limit, so the compile bomb is stopped quickly.
    args.push_back("--compile-cpu-limit-s=10");
    auto kbd = KbdProcess::Start({args, ""});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = kbd->release();
    stub_ = v1::Kbench::NewStub(
                grpc::CreateChannel(kbd_->address(),
                                    grpc::InsecureChannelCredentials()))
                .release();
  }
  static void TearDownTestSuite() {
    delete stub_;
    delete kbd_;
    stub_ = nullptr;
    kbd_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(stub_, nullptr) << "kbd did not start"; }

  // kbd still compiles a correct kernel.
  static void ExpectStillCompiles(const std::string& after) {
    v1::CompileKernelRequest req;
    req.mutable_kernel()->set_source(
        testing::ReadSourceFile("kernels/examples/gather_linear_naive.cu"));
    req.mutable_kernel()->set_filename("gather_linear_naive.cu");
    v1::CompileKernelResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(redteam::Deadline(120));
    const grpc::Status s = stub_->CompileKernel(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << "after " << after << ": " << s.error_message();
    EXPECT_TRUE(resp.compile().success()) << "after " << after;
    EXPECT_GT(resp.compile().kernels_size(), 0) << "after " << after;
  }

  static KbdProcess* kbd_;
  static v1::Kbench::Stub* stub_;
};

KbdProcess* RedTeamCompileTest::kbd_ = nullptr;
v1::Kbench::Stub* RedTeamCompileTest::stub_ = nullptr;

TEST_P(RedTeamCompileTest, IsRefusedAndKbdGoesOnCompiling) {
  const Case& c = GetParam();
  const redteam::Outcome o = redteam::RunTool(
      stub_, c.tool,
      redteam::CaseRequest(c, absl::StrCat("redteam-compile-", c.name)),
      /*deadline_s=*/120);
  redteam::ExpectVerdict(c, o, kbd_->Log());
  ExpectStillCompiles(c.name);
}

INSTANTIATE_TEST_SUITE_P(Adversarial, RedTeamCompileTest,
                         ::testing::ValuesIn(redteam::CompileStageCases()),
                         redteam::CaseName);

}  // namespace
}  // namespace kbench
