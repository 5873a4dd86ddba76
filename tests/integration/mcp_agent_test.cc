// A scripted agent speaking MCP to the real `kbctl mcp` (a child process
// with stdin/stdout pipes) against a real kbd without a GPU worker: the
// handshake, the tool list, GPU tools refused with a message, the problem,
// a compile error then its fix, and compare_runs of the two; stdout carries
// JSON-RPC alone and the session records the turns.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/kbench_client.h"
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
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kNaive[] = "kernels/examples/gather_linear_naive.cu";

// The naive kernel with `acc` misspelled in its last statement; `line` is
// set to that statement's line number (1-based).
std::string MisspelledNaive(int* line) {
  std::string source = ReadSourceFile(kNaive);
  const std::string from = "out[b * K + k] = acc;";
  const size_t at = source.find(from);
  if (at == std::string::npos) return "";
  source.replace(at, from.size(), "out[b * K + k] = accc;");
  *line = 1 + static_cast<int>(
                  std::count(source.begin(), source.begin() + at, '\n'));
  return source;
}

class McpAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kbd = KbdProcess::Start({});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = *std::move(kbd);
    auto child = PipeChild::Start({BinDir() + "/kbctl", "mcp", "--server",
                                   kbd_->address(), "--log-level", "debug"},
                                  {{"KBENCH_SESSION", ""}});
    ASSERT_TRUE(child.ok()) << child.status();
    mcp_ = *std::move(child);
  }

  void Send(const json& message) {
    const absl::Status s = mcp_->WriteLine(message.dump());
    ASSERT_TRUE(s.ok()) << s << "\nkbctl stderr:\n" << mcp_->Stderr();
  }

  // Sends a request and returns its reply (checked to be a JSON-RPC reply
  // with the same id).
  json Rpc(const std::string& method, const json& params) {
    const int id = ++next_id_;
    Send({{"jsonrpc", "2.0"},
          {"id", id},
          {"method", method},
          {"params", params}});
    absl::StatusOr<std::string> line = mcp_->ReadLine(absl::Seconds(180));
    EXPECT_TRUE(line.ok()) << method << ": " << line.status()
                           << "\nkbctl stderr:\n"
                           << mcp_->Stderr();
    if (!line.ok()) return json();
    json reply = json::parse(*line, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(reply.is_discarded()) << "not JSON: " << *line;
    EXPECT_EQ(reply.value("jsonrpc", json()), "2.0") << *line;
    EXPECT_EQ(reply.value("id", json()), id) << *line;
    return reply;
  }

  // tools/call; returns the result after checking it is one (not an
  // error) with one text content and its isError as `expect_error`.
  json Call(const std::string& tool, const json& args, bool expect_error) {
    const json reply = Rpc("tools/call", {{"name", tool}, {"arguments", args}});
    EXPECT_TRUE(reply.contains("result")) << tool << ": " << reply.dump();
    json result = reply.value("result", json::object());
    EXPECT_EQ(result.value("isError", json()), expect_error)
        << tool << ": " << Text(result);
    EXPECT_EQ(result.value("content", json()).size(), 1u) << reply.dump();
    EXPECT_TRUE(result.value("structuredContent", json()).is_object())
        << reply.dump();
    return result;
  }

  static std::string Text(const json& result) {
    if (!result.contains("content") || result["content"].empty()) return "";
    return result["content"][0].value("text", "");
  }

  std::unique_ptr<KbdProcess> kbd_;
  std::unique_ptr<PipeChild> mcp_;
  int next_id_ = 0;
};

TEST_F(McpAgentTest, ScriptedSessionWithoutAGpu) {
  // Handshake.
  json reply =
      Rpc("initialize",
          {{"protocolVersion", "2025-06-18"},
           {"capabilities", json::object()},
           {"clientInfo", {{"name", "mcp_agent_test"}, {"version", "1"}}}});
  EXPECT_EQ(reply["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(reply["result"]["serverInfo"]["name"], "kbench");
  EXPECT_EQ(reply["result"]["capabilities"]["tools"]["listChanged"], false);
  Send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});

  // The tools (the notification got no reply: this is the next line).
  reply = Rpc("tools/list", json::object());
  const json tools = reply["result"]["tools"];
  ASSERT_EQ(tools.size(), 9u) << reply.dump();
  std::vector<std::string> names;
  for (const json& t : tools) {
    names.push_back(t["name"]);
    EXPECT_EQ(t["inputSchema"]["type"], "object") << t.dump();
  }
  EXPECT_THAT(names, ::testing::ElementsAre(
                         "get_gpu_specs", "get_problem", "list_problems",
                         "compile_kernel", "run_correctness", "profile_kernel",
                         "submit_kernel", "sanitize_kernel", "compare_runs"));

  // No GPU worker: refused, with what to do.
  json result = Call("get_gpu_specs", json::object(), /*expect_error=*/true);
  EXPECT_THAT(Text(result), HasSubstr("FAILED_PRECONDITION"));
  EXPECT_THAT(Text(result), HasSubstr("no GPU worker is connected"));

  // The problem.
  result = Call("get_problem", json::object(), false);
  EXPECT_THAT(Text(result), HasSubstr("PROBLEM: gather_linear_fp32"));
  EXPECT_THAT(Text(result), HasSubstr("SIGNATURE:"));
  EXPECT_THAT(Text(result),
              HasSubstr("extern \"C\" __global__ void gather_linear("));
  EXPECT_THAT(Text(result), HasSubstr("KERNEL CONTRACT"));

  // A compile error, with its line.
  int bad_line = 0;
  const std::string bad = MisspelledNaive(&bad_line);
  ASSERT_FALSE(bad.empty());
  result = Call("compile_kernel", {{"kernel_code", bad}}, true);
  EXPECT_THAT(Text(result), HasSubstr("VERDICT: compile_error"));
  EXPECT_THAT(Text(result),
              HasSubstr(absl::StrCat("kernel.cu:", bad_line, ": error")));
  EXPECT_THAT(Text(result), HasSubstr("accc"));
  const std::string bad_job = result["structuredContent"]["id"];
  const std::string session = result["structuredContent"]["session_id"];
  EXPECT_FALSE(session.empty());

  // Fixed.
  result =
      Call("compile_kernel", {{"kernel_code", ReadSourceFile(kNaive)}}, false);
  EXPECT_THAT(Text(result), HasSubstr("VERDICT: passed"));
  EXPECT_THAT(Text(result), HasSubstr("gather_linear: "));
  EXPECT_THAT(Text(result), HasSubstr("registers/thread"));
  const std::string good_job = result["structuredContent"]["id"];
  EXPECT_EQ(result["structuredContent"]["session_id"], session);

  // A GPU tool: refused without a worker.
  result =
      Call("run_correctness", {{"kernel_code", ReadSourceFile(kNaive)}}, true);
  EXPECT_THAT(Text(result), HasSubstr("ERROR FAILED_PRECONDITION"));
  EXPECT_THAT(Text(result), HasSubstr("no GPU worker is connected"));

  // The two compile turns, from the session (kbctl session show).
  KbenchClient client(kbd_->address(), absl::Seconds(30));
  v1::GetSessionRequest get;
  get.set_session_id(session);
  int turn_bad = 0, turn_good = 0;
  for (const absl::Time deadline = absl::Now() + absl::Seconds(30);
       (turn_bad == 0 || turn_good == 0) && absl::Now() < deadline;
       absl::SleepFor(absl::Milliseconds(50))) {
    absl::StatusOr<v1::GetSessionResponse> s = client.GetSession(get);
    ASSERT_TRUE(s.ok()) << s.status();
    for (const v1::Turn& t : s->turns()) {
      if (t.job_id() == bad_job) turn_bad = t.seq();
      if (t.job_id() == good_job) turn_good = t.seq();
    }
  }
  ASSERT_GT(turn_bad, 0);
  ASSERT_GT(turn_good, turn_bad);
  const testing::CommandResult show =
      testing::RunCommand({BinDir() + "/kbctl", "session", "show", session,
                           "--server", kbd_->address()});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr(absl::StrCat("session ", session)));
  EXPECT_THAT(show.out,
              ::testing::ContainsRegex(absl::StrCat(
                  " ", turn_bad, " +compile_kernel +compile_error +[0-9]+ ms +",
                  bad_job)));
  EXPECT_THAT(
      show.out,
      ::testing::ContainsRegex(absl::StrCat(
          " ", turn_good, " +compile_kernel +passed +[0-9]+ ms +", good_job)));

  // What changed between them: the fix.
  result = Call("compare_runs", {{"turn_a", turn_bad}, {"turn_b", turn_good}},
                false);
  EXPECT_THAT(Text(result),
              HasSubstr(absl::StrCat("A: turn ", turn_bad,
                                     " compile_kernel -> compile_error")));
  EXPECT_THAT(Text(result),
              HasSubstr(absl::StrCat("B: turn ", turn_good,
                                     " compile_kernel -> passed")));
  EXPECT_THAT(Text(result), HasSubstr("source: +1 -1 lines"));
  EXPECT_THAT(Text(result), HasSubstr("-  out[b * K + k] = accc;"));
  EXPECT_THAT(Text(result), HasSubstr("+  out[b * K + k] = acc;"));

  // A protocol mistake is a JSON-RPC error, and the server goes on.
  reply = Rpc("tools/call",
              {{"name", "compile_kernel"}, {"arguments", {{"code", "x"}}}});
  EXPECT_EQ(reply["error"]["code"], -32602) << reply.dump();
  EXPECT_EQ(Rpc("ping", json::object())["result"], json::object());

  // End of input ends the server; stdout held replies only, one per request.
  mcp_->CloseStdin();
  EXPECT_EQ(mcp_->ReadToEnd(absl::Seconds(30)), "");
  EXPECT_EQ(mcp_->Wait(absl::Seconds(30)), 0) << mcp_->Stderr();
  ASSERT_EQ(static_cast<int>(mcp_->lines().size()), next_id_);
  for (size_t i = 0; i < mcp_->lines().size(); ++i) {
    const json m =
        json::parse(mcp_->lines()[i], nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(m.is_object()) << mcp_->lines()[i];
    EXPECT_EQ(m["jsonrpc"], "2.0");
    EXPECT_EQ(m["id"], static_cast<int>(i) + 1);
    EXPECT_NE(m.contains("result"), m.contains("error")) << m.dump();
  }
  // The logs went to stderr, the session's id among them.
  EXPECT_THAT(mcp_->Stderr(), HasSubstr(absl::StrCat("session ", session)));

  // The session recorded the turns, in order.
  absl::StatusOr<v1::GetSessionResponse> s = client.GetSession(get);
  ASSERT_TRUE(s.ok()) << s.status();
  std::vector<std::string> recorded;
  for (const v1::Turn& t : s->turns()) recorded.push_back(t.tool());
  // The refused run_correctness (no GPU) is a turn too.
  EXPECT_THAT(recorded,
              ::testing::ElementsAre("get_gpu_specs", "get_problem",
                                     "compile_kernel", "compile_kernel",
                                     "run_correctness", "compare_runs"));
  EXPECT_EQ(s->turns(0).verdict(), v1::VERDICT_ERROR);
  EXPECT_EQ(s->turns(4).verdict(), v1::VERDICT_ERROR);
  EXPECT_THAT(s->turns(4).message(), HasSubstr("refused: no GPU worker"));
  EXPECT_TRUE(s->turns(4).job_id().empty());
  EXPECT_EQ(s->turns(2).verdict(), v1::VERDICT_COMPILE_ERROR);
  EXPECT_EQ(s->turns(3).verdict(), v1::VERDICT_PASSED);
  EXPECT_EQ(s->session().problem(), "gather_linear_fp32");
}

TEST_F(McpAgentTest, GivenSessionIsUsedAndParseErrorsAreAnswered) {
  KbenchClient client(kbd_->address(), absl::Seconds(30));
  v1::CreateSessionRequest create;
  absl::StatusOr<v1::CreateSessionResponse> created =
      client.CreateSession(create);
  ASSERT_TRUE(created.ok()) << created.status();
  const std::string session = created->session().id();
  // A second server with --session.
  mcp_.reset();
  auto child = PipeChild::Start({BinDir() + "/kbctl", "mcp", "--server",
                                 kbd_->address(), "--session", session});
  ASSERT_TRUE(child.ok()) << child.status();
  mcp_ = *std::move(child);

  ASSERT_TRUE(mcp_->WriteLine("{\"jsonrpc\": \"2.0\", \"id\": 1,").ok());
  absl::StatusOr<std::string> line = mcp_->ReadLine(absl::Seconds(60));
  ASSERT_TRUE(line.ok()) << line.status() << mcp_->Stderr();
  const json parse_error = json::parse(*line);
  EXPECT_EQ(parse_error["error"]["code"], -32700);
  EXPECT_TRUE(parse_error["id"].is_null());
  next_id_ = 1;  // Request ids go on from 2.

  const json result = Call("get_problem", json::object(), false);
  EXPECT_THAT(Text(result), HasSubstr("KERNEL CONTRACT"));
  v1::GetSessionRequest get;
  get.set_session_id(session);
  absl::StatusOr<v1::GetSessionResponse> s = client.GetSession(get);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->turns_size(), 1);
  EXPECT_EQ(s->turns(0).tool(), "get_problem");
  mcp_->CloseStdin();
  EXPECT_EQ(mcp_->Wait(absl::Seconds(30)), 0);
  EXPECT_THAT(mcp_->Stderr(), HasSubstr(session));
  EXPECT_THAT(mcp_->Stderr(), Not(HasSubstr("created session")));
}

}  // namespace
}  // namespace kbench
