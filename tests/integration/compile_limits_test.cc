// kbd's compile limits over gRPC (compile_kernel; no GPU needed): a host
// #include is rejected without echoing the file, a compile bomb is stopped
// by the sandbox's CPU limit (and kbd keeps compiling), a device-side launch
// is refused, and a 10 MB source gets INVALID_ARGUMENT naming 256 KiB.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::kbench::testing::KbdProcess;
using ::kbench::testing::ReadSourceFile;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

const char kNaive[] = "kernels/examples/gather_linear_naive.cu";

class CompileLimitsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    KbdProcess::Options options;
    options.extra_args = {"--compile-cpu-limit-s=3", "--compile-threads=1",
                          "--http-listen=off"};
    auto kbd = KbdProcess::Start(options);
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = kbd->release();
    grpc::ChannelArguments args;
    args.SetMaxSendMessageSize(-1);
    args.SetMaxReceiveMessageSize(64 << 20);
    channel_ = new std::shared_ptr<grpc::Channel>(grpc::CreateCustomChannel(
        kbd_->address(), grpc::InsecureChannelCredentials(), args));
  }
  static void TearDownTestSuite() {
    delete channel_;
    delete kbd_;
  }
  void SetUp() override { stub_ = v1::Kbench::NewStub(*channel_); }

  grpc::Status Compile(const std::string& source,
                       v1::CompileKernelResponse* response) {
    v1::CompileKernelRequest req;
    req.mutable_kernel()->set_source(source);
    req.mutable_kernel()->set_filename("kernel.cu");
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(120));
    return stub_->CompileKernel(&ctx, req, response);
  }

  // The verdict of the newest job (tests run one at a time).
  v1::Verdict LatestVerdict() {
    v1::ListJobsRequest req;
    req.set_page_size(1);
    v1::ListJobsResponse resp;
    grpc::ClientContext ctx;
    if (!stub_->ListJobs(&ctx, req, &resp).ok() || resp.jobs_size() == 0) {
      return v1::VERDICT_UNSPECIFIED;
    }
    return resp.jobs(0).result().verdict();
  }

  // The naive example with `extra` inserted after its first line.
  static std::string Naive(const std::string& extra) {
    std::string s = ReadSourceFile(kNaive);
    const size_t eol = s.find('\n') + 1;
    return s.substr(0, eol) + extra + s.substr(eol);
  }

  static KbdProcess* kbd_;
  static std::shared_ptr<grpc::Channel>* channel_;
  std::unique_ptr<v1::Kbench::Stub> stub_;
};

KbdProcess* CompileLimitsTest::kbd_ = nullptr;
std::shared_ptr<grpc::Channel>* CompileLimitsTest::channel_ = nullptr;

TEST_F(CompileLimitsTest, HostIncludeIsRejectedWithoutEchoingTheFile) {
  v1::CompileKernelResponse resp;
  const grpc::Status s = Compile(Naive("#include \"/etc/passwd\"\n"), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(),
              AllOf(HasSubstr("include"), HasSubstr("/etc/passwd"),
                    HasSubstr("kernel.cu:2"), Not(HasSubstr("root:"))));
  EXPECT_THAT(resp.DebugString(), Not(HasSubstr("root:")));
  EXPECT_EQ(LatestVerdict(), v1::VERDICT_REJECTED);
  EXPECT_THAT(kbd_->Log(), Not(HasSubstr("root:")));
}

TEST_F(CompileLimitsTest, DeviceSideLaunchIsRefused) {
  v1::CompileKernelResponse resp;
  const grpc::Status s =
      Compile(Naive("__global__ void child() {}\n"
                    "__global__ void parent() { child<<<1, 1>>>(); }\n"),
              &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("dynamic parallelism"));
}

TEST_F(CompileLimitsTest, CompileBombHitsTheLimitAndKbdKeepsCompiling) {
  const std::string bomb = Naive(
      "template <int N, int M> struct B {\n"
      "  static constexpr int v = B<N - 1, 2 * M>::v + B<N - 1, 2 * M + "
      "1>::v;\n"
      "};\n"
      "template <int M> struct B<0, M> { static constexpr int v = 1; };\n"
      "__global__ void bomb(int* out) { *out = B<26, 0>::v; }\n");
  v1::CompileKernelResponse resp;
  const grpc::Status s = Compile(bomb, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << s.error_message();
  EXPECT_THAT(s.error_message(),
              AllOf(HasSubstr("compile"), HasSubstr("limit")));
  EXPECT_EQ(LatestVerdict(), v1::VERDICT_REJECTED);
  v1::CompileKernelResponse ok;
  const grpc::Status next =
      Compile(ReadSourceFile(kNaive) + "\n// after the bomb\n", &ok);
  ASSERT_TRUE(next.ok()) << next.error_message();
  EXPECT_TRUE(ok.compile().success());
  EXPECT_FALSE(ok.compile().cached());
}

TEST_F(CompileLimitsTest, TenMegabyteSourceIsInvalidArgumentNaming256KiB) {
  const std::string source =
      ReadSourceFile(kNaive) + "\n// " + std::string(10 << 20, 'x') + "\n";
  v1::CompileKernelResponse resp;
  const grpc::Status s = Compile(source, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("256 KiB"));
}

}  // namespace
}  // namespace kbench
