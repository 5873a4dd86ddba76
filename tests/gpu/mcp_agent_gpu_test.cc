// The whole scripted agent session on a real GPU, through `kbctl mcp` (a
// child process with stdin/stdout pipes) against kbd with one local
// worker: specs, problem, a compile error and its fix, a failing and a
// passing check, profile, submit, and compare_runs of the two checks.
// Skips without an NVIDIA GPU.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "testing/pipe_child.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::kbench::testing::BinDir;
using ::kbench::testing::KbdProcess;
using ::kbench::testing::PipeChild;
using ::kbench::testing::ReadSourceFile;
using nlohmann::json;
using ::testing::AnyOf;
using ::testing::HasSubstr;

constexpr char kNaive[] = "kernels/examples/gather_linear_naive.cu";
constexpr char kWrong[] = "tests/gpu/kernels/wrong_no_bias.cu";

class McpAgentGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KB_SKIP_WITHOUT_GPU();
    auto kbd = KbdProcess::Start({{"--local-worker=1"}, ""});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = *std::move(kbd);
    stub_ = v1::Kbench::NewStub(grpc::CreateChannel(
        kbd_->address(), grpc::InsecureChannelCredentials()));
    // Wait for the local worker (runner start creates the CUDA context).
    bool connected = false;
    for (int i = 0; i < 600 && !connected; ++i) {
      v1::GetGpuSpecsResponse resp;
      grpc::ClientContext ctx;
      connected =
          stub_->GetGpuSpecs(&ctx, v1::GetGpuSpecsRequest(), &resp).ok() &&
          resp.gpus_size() > 0;
      if (!connected) absl::SleepFor(absl::Milliseconds(100));
    }
    ASSERT_TRUE(connected) << "the local worker did not connect; kbd log:\n"
                           << kbd_->Log();
    auto child = PipeChild::Start(
        {BinDir() + "/kbctl", "mcp", "--server", kbd_->address()},
        {{"KBENCH_SESSION", ""}});
    ASSERT_TRUE(child.ok()) << child.status();
    mcp_ = *std::move(child);
  }

  json Rpc(const std::string& method, const json& params) {
    const int id = ++next_id_;
    const absl::Status sent = mcp_->WriteLine(json({{"jsonrpc", "2.0"},
                                                    {"id", id},
                                                    {"method", method},
                                                    {"params", params}})
                                                  .dump());
    EXPECT_TRUE(sent.ok()) << sent;
    absl::StatusOr<std::string> line = mcp_->ReadLine(absl::Seconds(300));
    EXPECT_TRUE(line.ok()) << method << ": " << line.status()
                           << "\nkbctl stderr:\n"
                           << mcp_->Stderr();
    if (!line.ok()) return json();
    json reply = json::parse(*line, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(reply.is_discarded()) << "not JSON: " << *line;
    EXPECT_EQ(reply.value("id", json()), id) << *line;
    return reply;
  }

  // tools/call; the result, checked to have isError `expect_error`.
  json Call(const std::string& tool, const json& args, bool expect_error) {
    const json reply = Rpc("tools/call", {{"name", tool}, {"arguments", args}});
    EXPECT_TRUE(reply.contains("result")) << tool << ": " << reply.dump();
    const json result = reply.value("result", json::object());
    EXPECT_EQ(result.value("isError", json()), expect_error)
        << tool << ": " << Text(result);
    return result;
  }

  static std::string Text(const json& result) {
    if (!result.contains("content") || result["content"].empty()) return "";
    return result["content"][0].value("text", "");
  }

  // The turn (seq) of job `job_id` in `session`; 0 when not recorded within
  // 30 s.
  int TurnOf(const std::string& session, const std::string& job_id) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (absl::Now() < deadline) {
      v1::GetSessionRequest req;
      req.set_session_id(session);
      v1::GetSessionResponse resp;
      grpc::ClientContext ctx;
      if (stub_->GetSession(&ctx, req, &resp).ok()) {
        for (const v1::Turn& t : resp.turns()) {
          if (t.job_id() == job_id) return t.seq();
        }
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    return 0;
  }

  std::unique_ptr<KbdProcess> kbd_;
  std::unique_ptr<v1::Kbench::Stub> stub_;
  std::unique_ptr<PipeChild> mcp_;
  int next_id_ = 0;
};

TEST_F(McpAgentGpuTest, WholeSession) {
  json reply = Rpc("initialize", {{"protocolVersion", "2025-11-25"}});
  EXPECT_EQ(reply["result"]["protocolVersion"], "2025-11-25");
  ASSERT_TRUE(
      mcp_->WriteLine(
              R"({"jsonrpc":"2.0","method":"notifications/initialized"})")
          .ok());

  // Specs, with the ceilings measured on this GPU.
  json r = Call("get_gpu_specs", json::object(), false);
  EXPECT_THAT(Text(r), HasSubstr("measured on this GPU"));
  const json& spec = r["structuredContent"]["gpus"][0]["spec"];
  EXPECT_GT(spec.value("measured_copy_gbps", 0.0), 0) << spec.dump();
  EXPECT_GT(spec.value("measured_fp32_tflops", 0.0), 0) << spec.dump();

  r = Call("get_problem", json::object(), false);
  EXPECT_THAT(Text(r), HasSubstr("KERNEL CONTRACT"));

  // A compile error, then the fix.
  std::string bad = ReadSourceFile(kNaive);
  const size_t at = bad.find("= acc;");
  ASSERT_NE(at, std::string::npos);
  bad.replace(at, 6, "= accc;");
  r = Call("compile_kernel", {{"kernel_code", bad}}, true);
  EXPECT_THAT(Text(r), HasSubstr("kernel.cu:"));
  EXPECT_THAT(Text(r), HasSubstr(": error"));
  const std::string session = r["structuredContent"]["session_id"];
  ASSERT_FALSE(session.empty());
  r = Call("compile_kernel", {{"kernel_code", ReadSourceFile(kNaive)}}, false);
  EXPECT_THAT(Text(r), HasSubstr("registers/thread"));

  // A failing check, then a passing one.
  r = Call("run_correctness", {{"kernel_code", ReadSourceFile(kWrong)}}, true);
  EXPECT_THAT(Text(r), HasSubstr("VERDICT: failed"));
  const std::string failing_job = r["structuredContent"]["id"];
  r = Call("run_correctness", {{"kernel_code", ReadSourceFile(kNaive)}}, false);
  EXPECT_THAT(Text(r), HasSubstr("VERDICT: passed"));
  EXPECT_THAT(Text(r), HasSubstr("trials passed"));
  const std::string passing_job = r["structuredContent"]["id"];

  r = Call("profile_kernel", {{"kernel_code", ReadSourceFile(kNaive)}}, false);
  EXPECT_THAT(Text(r), HasSubstr("launch gather_linear: "));

  r = Call("submit_kernel", {{"kernel_code", ReadSourceFile(kNaive)}}, false);
  const std::string submit = Text(r);
  EXPECT_THAT(submit, AnyOf(HasSubstr("faster"), HasSubstr("slower")));
  EXPECT_THAT(submit, HasSubstr("launches: "));
  EXPECT_THAT(submit, HasSubstr("memory: "));
  EXPECT_THAT(submit, HasSubstr("SOL: "));

  // The failing check against the passing one.
  const int turn_a = TurnOf(session, failing_job);
  const int turn_b = TurnOf(session, passing_job);
  ASSERT_GT(turn_a, 0);
  ASSERT_GT(turn_b, turn_a);
  r = Call("compare_runs", {{"turn_a", turn_a}, {"turn_b", turn_b}}, false);
  EXPECT_THAT(Text(r), HasSubstr(absl::StrCat("A: turn ", turn_a,
                                              " run_correctness -> failed")));
  EXPECT_THAT(Text(r), HasSubstr(absl::StrCat("B: turn ", turn_b,
                                              " run_correctness -> passed")));
  EXPECT_THAT(Text(r), HasSubstr("bias[k]"));

  mcp_->CloseStdin();
  EXPECT_EQ(mcp_->ReadToEnd(absl::Seconds(30)), "");
  EXPECT_EQ(mcp_->Wait(absl::Seconds(30)), 0) << mcp_->Stderr();
  ASSERT_EQ(static_cast<int>(mcp_->lines().size()), next_id_);
  for (const std::string& line : mcp_->lines()) {
    const json m = json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(m.is_object()) << line;
    EXPECT_EQ(m["jsonrpc"], "2.0");
  }
}

}  // namespace
}  // namespace kbench
