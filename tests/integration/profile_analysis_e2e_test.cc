// kbd's side of profile_kernel, through gRPC with a fake-runner worker: the
// preset check, the analysis kbd adds to every profile (headroom, hints),
// and the deltas against the session's previous profile.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::kbench::testing::BinDir;
using ::kbench::testing::KbdProcess;
using ::kbench::testing::ReadSourceFile;

class ProfileAnalysisE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kbd = KbdProcess::Start({});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = std::move(*kbd);
    stub_ = v1::Kbench::NewStub(grpc::CreateChannel(
        kbd_->address(), grpc::InsecureChannelCredentials()));
  }

  grpc::Status Profile(const std::string& source, const std::string& session,
                       const std::string& preset,
                       v1::ProfileKernelResponse* response) {
    v1::ProfileKernelRequest req;
    req.mutable_kernel()->set_source(source);
    req.mutable_kernel()->set_session_id(session);
    req.mutable_kernel()->set_profile_preset(preset);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(60));
    return stub_->ProfileKernel(&ctx, req, response);
  }

  bool WaitForWorker() {
    for (int i = 0; i < 200; ++i) {
      v1::GetGpuSpecsRequest req;
      v1::GetGpuSpecsResponse resp;
      grpc::ClientContext ctx;
      if (stub_->GetGpuSpecs(&ctx, req, &resp).ok()) return true;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return false;
  }

  std::unique_ptr<KbdProcess> kbd_;
  std::unique_ptr<v1::Kbench::Stub> stub_;
};

TEST_F(ProfileAnalysisE2eTest, UnknownPresetIsInvalidArgumentNamingTheValues) {
  v1::ProfileKernelResponse resp;
  const grpc::Status s =
      Profile(ReadSourceFile("kernels/examples/gather_linear_naive.cu"), "",
              "quick", &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("profile_preset must be \"fast\""),
            std::string::npos)
      << s.error_message();
  EXPECT_NE(s.error_message().find("\"fast\""), std::string::npos);
  EXPECT_NE(s.error_message().find("\"full\""), std::string::npos);
  EXPECT_NE(s.error_message().find("\"quick\""), std::string::npos);
}

TEST_F(ProfileAnalysisE2eTest, ProfilesCarryAnalysisAndDeltasInASession) {
  auto worker =
      testing::StartWorker(kbd_->address(), BinDir() + "/kb_fake_runner");
  ASSERT_TRUE(worker.ok()) << worker.status();
  ASSERT_TRUE(WaitForWorker());
  const std::string naive =
      ReadSourceFile("kernels/examples/gather_linear_naive.cu");

  v1::ProfileKernelResponse first;
  ASSERT_TRUE(
      Profile(naive + "\n// FAKE_KERNEL_US=10\n", "s-prof", "fast", &first)
          .ok());
  const v1::ProfileReport& p1 = first.result().profile();
  // kbd's analysis: the fake GPU measures 4000 GB/s and 60 TFLOP/s.
  ASSERT_TRUE(p1.has_headroom()) << p1.DebugString();
  EXPECT_GT(p1.headroom().floor_us(), 0);
  EXPECT_DOUBLE_EQ(p1.headroom().measured_us(), 10);
  EXPECT_NEAR(p1.headroom().ratio(), 10 / p1.headroom().floor_us(), 1e-9);
  // The fake runner's long_scoreboard share (46.5%) fires its rule.
  bool long_scoreboard = false;
  for (const v1::ProfileHint& h : p1.hints()) {
    long_scoreboard = long_scoreboard || h.rule() == "long_scoreboard";
  }
  EXPECT_TRUE(long_scoreboard) << p1.DebugString();
  EXPECT_TRUE(p1.deltas().empty());  // The session's first profile.
  EXPECT_EQ(p1.previous_job_id(), "");

  // Slower: 20 us. Compared with the first.
  v1::ProfileKernelResponse second;
  ASSERT_TRUE(
      Profile(naive + "\n// FAKE_KERNEL_US=20\n", "s-prof", "", &second).ok());
  const v1::ProfileReport& p2 = second.result().profile();
  EXPECT_EQ(p2.previous_job_id(), first.job_id());
  const v1::MetricDelta* time = nullptr;
  for (const v1::MetricDelta& d : p2.deltas()) {
    if (d.figure() == "kernel_median_us") time = &d;
  }
  ASSERT_NE(time, nullptr) << p2.DebugString();
  EXPECT_DOUBLE_EQ(time->previous(), 10);
  EXPECT_DOUBLE_EQ(time->current(), 20);
  EXPECT_TRUE(time->regressed());

  // Another session starts afresh.
  v1::ProfileKernelResponse other;
  ASSERT_TRUE(Profile(naive, "s-other", "full", &other).ok());
  EXPECT_TRUE(other.result().profile().deltas().empty());
  EXPECT_EQ(other.result().profile().previous_job_id(), "");
}

}  // namespace
}  // namespace kbench
