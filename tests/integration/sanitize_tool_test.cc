// sanitize_kernel end to end without a GPU: kbd + kbworker with the
// stand-in runner. Without compute-sanitizer the tool answers with a clear
// FAILED_PRECONDITION "not installed" result (gRPC and HTTP) and the worker
// keeps serving; with a stand-in compute-sanitizer script that writes a
// canned memcheck log, the findings come back with their source lines.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
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
using ::kbench::testing::TempDir;
using nlohmann::json;

std::string Naive() {
  return ReadSourceFile("kernels/examples/gather_linear_naive.cu");
}

// The 1-based number of the first line of `source` containing `text`.
int LineOf(const std::string& source, const std::string& text) {
  int line = 1;
  size_t start = 0;
  while (start <= source.size()) {
    const size_t end = source.find('\n', start);
    const std::string l = source.substr(start, end - start);
    if (l.find(text) != std::string::npos) return line;
    if (end == std::string::npos) break;
    start = end + 1;
    ++line;
  }
  return 0;
}

class SanitizeToolTest : public ::testing::Test {
 protected:
  void Start(const std::string& sanitizer) {
    auto kbd = KbdProcess::Start({});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = std::move(*kbd);
    stub_ = v1::Kbench::NewStub(grpc::CreateChannel(
        kbd_->address(), grpc::InsecureChannelCredentials()));
    auto w =
        StartWorker(kbd_->address(), BinDir() + "/kb_fake_runner", 0,
                    {"--worker-id", "w-san", "--compute-sanitizer", sanitizer});
    ASSERT_TRUE(w.ok()) << w.status();
    worker_ = std::move(*w);
    for (int i = 0; i < 200; ++i) {
      v1::GetGpuSpecsResponse resp;
      grpc::ClientContext ctx;
      if (stub_->GetGpuSpecs(&ctx, v1::GetGpuSpecsRequest(), &resp).ok() &&
          resp.gpus_size() > 0) {
        return;
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    FAIL() << "the worker did not connect; kbd log:\n" << kbd_->Log();
  }

  grpc::Status Sanitize(const std::string& source,
                        const std::vector<std::string>& tools,
                        v1::SanitizeKernelResponse* response) {
    v1::SanitizeKernelRequest req;
    req.mutable_kernel()->set_source(source);
    for (const std::string& t : tools) {
      req.mutable_kernel()->add_sanitize_tools(t);
    }
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(120));
    return stub_->SanitizeKernel(&ctx, req, response);
  }

  std::unique_ptr<KbdProcess> kbd_;
  std::unique_ptr<Child> worker_;
  std::unique_ptr<v1::Kbench::Stub> stub_;
};

TEST_F(SanitizeToolTest, NotInstalledIsAClearErrorAndTheWorkerKeepsServing) {
  Start("/nonexistent/compute-sanitizer");
  v1::SanitizeKernelResponse resp;
  // Over gRPC a job the service could not carry out is the call's status.
  grpc::Status s = Sanitize(Naive(), {}, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(
      s.error_message(), "compute-sanitizer is not installed on worker w-san"))
      << s.error_message();
  EXPECT_TRUE(
      absl::StrContains(s.error_message(), "/nonexistent/compute-sanitizer"))
      << s.error_message();

  // The same through the HTTP tool: an error result, not a transport error.
  const std::string& addr = kbd_->http_address();
  ASSERT_FALSE(addr.empty());
  int port = 0;
  ASSERT_TRUE(absl::SimpleAtoi(addr.substr(addr.rfind(':') + 1), &port));
  httplib::Client http(addr.substr(0, addr.rfind(':')), port);
  http.set_read_timeout(120);
  json args = {{"kernel_code", Naive()}, {"tools", {"memcheck"}}};
  httplib::Result res =
      http.Post("/v1/tools/sanitize_kernel", args.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  json body = json::parse(res->body);
  EXPECT_EQ(body["isError"], true);
  const std::string text = body["content"][0]["text"];
  EXPECT_TRUE(absl::StrContains(text, "VERDICT: error (sanitize_kernel"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "not installed on worker w-san")) << text;

  // The worker still runs ordinary jobs.
  v1::RunCorrectnessRequest check;
  check.mutable_kernel()->set_source(Naive());
  v1::RunCorrectnessResponse checked;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  ASSERT_TRUE(stub_->RunCorrectness(&ctx, check, &checked).ok());
  EXPECT_EQ(checked.result().verdict(), v1::VERDICT_PASSED)
      << checked.result().message();
}

TEST_F(SanitizeToolTest, UnknownToolIsInvalidArgument) {
  Start("/nonexistent/compute-sanitizer");
  v1::SanitizeKernelResponse resp;
  grpc::Status s = Sanitize(Naive(), {"synccheck"}, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "synccheck"))
      << s.error_message();
}

TEST_F(SanitizeToolTest, FindingsComeBackWithSourceLines) {
  // A stand-in compute-sanitizer: writes a memcheck log naming the naive
  // kernel's store to `out`, exits 86 (--error-exitcode).
  TempDir dir;
  const std::string source = Naive();
  const int line = LineOf(source, "out[b * K + k] =");
  ASSERT_GT(line, 0);
  const std::string script = dir.path() + "/compute-sanitizer";
  {
    std::ofstream out(script);
    out << "#!/bin/sh\nlog=/dev/null\n"
        << "while [ $# -gt 0 ]; do case \"$1\" in --log-file) log=$2;; "
           "--oneshot) res=$3;; esac; shift; done\n"
        << ": > \"$res\"\n"
        << "cat > \"$log\" <<'EOF'\n"
        << "========= COMPUTE-SANITIZER\n"
        << "========= Invalid __global__ write of size 4 bytes\n"
        << "=========     at gather_linear+0x1f0 in kernel.cu:" << line << "\n"
        << "=========     by thread (3,0,0) in block (1,0,0)\n"
        << "=========     Address 0x7f0000001000 is out of bounds\n"
        << "=========\n"
        << "========= ERROR SUMMARY: 1 error\n"
        << "EOF\nexit 86\n";
  }
  chmod(script.c_str(), 0755);
  Start(script);
  v1::SanitizeKernelResponse resp;
  grpc::Status s = Sanitize(source, {"memcheck"}, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  const v1::JobResult& r = resp.result();
  EXPECT_EQ(r.verdict(), v1::VERDICT_FAILED) << r.message();
  ASSERT_EQ(r.sanitize().runs_size(), 1);
  EXPECT_EQ(r.sanitize().runs(0).tool(), "memcheck");
  EXPECT_EQ(r.sanitize().runs(0).exit_code(), 86);
  ASSERT_EQ(r.sanitize().findings_size(), 1);
  const v1::SanitizeFinding& f = r.sanitize().findings(0);
  EXPECT_EQ(f.line(), line);
  EXPECT_TRUE(absl::StrContains(f.source_line(), "out[")) << f.source_line();
  EXPECT_EQ(f.block(), "(1,0,0)");
  EXPECT_TRUE(
      absl::StrContains(r.message(), "kernel.cu:" + std::to_string(line)))
      << r.message();
  EXPECT_EQ(r.sanitize().shape_set(), "default");
}

}  // namespace
}  // namespace kbench
