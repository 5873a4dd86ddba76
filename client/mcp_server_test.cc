// McpServer (`kbctl mcp`): the JSON-RPC 2.0 / MCP handling of every method
// and error against a scripted AgentToolBackend, and the line protocol of
// Serve() over string streams. The session it creates is tested in
// mcp_session_test.cc.
#include "client/mcp_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "client/mcp_fixtures.h"

namespace kbench {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

using mcp_testing::Call;
using mcp_testing::FakeBackend;
using mcp_testing::Request;

class McpServerTest : public ::testing::Test {
 protected:
  json Handle(const json& message) {
    std::optional<json> reply = server_.Handle(message);
    EXPECT_TRUE(reply.has_value()) << message.dump();
    return reply.value_or(json());
  }
  // The error's code, after checking the reply's envelope and id.
  int ErrorCode(const json& reply, const json& id) {
    EXPECT_EQ(reply["jsonrpc"], "2.0");
    EXPECT_EQ(reply["id"], id) << reply.dump();
    EXPECT_FALSE(reply.contains("result")) << reply.dump();
    EXPECT_TRUE(reply["error"]["message"].is_string()) << reply.dump();
    return reply["error"]["code"].get<int>();
  }

  FakeBackend backend_;
  McpServer server_{backend_, nullptr, {}};
};

TEST_F(McpServerTest, InitializeAnswersTheRequestedSupportedVersion) {
  for (const std::string version : {"2025-06-18", "2025-11-25"}) {
    const json reply =
        Handle(Request(1, "initialize",
                       {{"protocolVersion", version},
                        {"capabilities", json::object()},
                        {"clientInfo", {{"name", "test"}, {"version", "1"}}}}));
    EXPECT_EQ(reply["jsonrpc"], "2.0");
    EXPECT_EQ(reply["id"], 1);
    const json& r = reply["result"];
    EXPECT_EQ(r["protocolVersion"], version);
    EXPECT_EQ(r["capabilities"], json({{"tools", {{"listChanged", false}}}}));
    EXPECT_EQ(r["serverInfo"]["name"], "kbench");
    EXPECT_EQ(r["serverInfo"]["version"], KBENCH_VERSION);
    EXPECT_THAT(r["instructions"].get<std::string>(),
                HasSubstr("Call get_problem first"));
  }
}

TEST_F(McpServerTest, InitializeAnswersTheLatestForAnUnknownVersion) {
  json reply =
      Handle(Request(7, "initialize", {{"protocolVersion", "2024-11-05"}}));
  EXPECT_EQ(reply["result"]["protocolVersion"], "2025-11-25");
  reply = Handle(Request(8, "initialize", json::object()));
  EXPECT_EQ(reply["result"]["protocolVersion"], "2025-11-25");
}

TEST_F(McpServerTest, NotificationsGetNoReply) {
  EXPECT_FALSE(
      server_
          .Handle({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}})
          .has_value());
  EXPECT_FALSE(server_
                   .Handle({{"jsonrpc", "2.0"},
                            {"method", "notifications/cancelled"},
                            {"params", {{"requestId", 3}}}})
                   .has_value());
  // Even an unknown method, or a tool call, sent as a notification.
  EXPECT_FALSE(
      server_.Handle({{"jsonrpc", "2.0"}, {"method", "no/such"}}).has_value());
  EXPECT_FALSE(server_
                   .Handle({{"jsonrpc", "2.0"},
                            {"method", "tools/call"},
                            {"params", {{"name", "get_gpu_specs"}}}})
                   .has_value());
  EXPECT_TRUE(backend_.sessions.empty());
  // A response (this server asks nothing) is not answered either.
  EXPECT_FALSE(server_.Handle({{"jsonrpc", "2.0"}, {"id", 1}, {"result", {}}})
                   .has_value());
}

TEST_F(McpServerTest, ToolsListHasEveryToolWithItsSchema) {
  const json reply = Handle(Request("list-1", "tools/list"));
  EXPECT_EQ(reply["id"], "list-1");
  const json& tools = reply["result"]["tools"];
  ASSERT_TRUE(tools.is_array());
  ASSERT_EQ(tools.size(), AgentToolDefs().size());
  ASSERT_EQ(tools.size(), 9u);
  for (size_t i = 0; i < tools.size(); ++i) {
    const AgentToolDef& def = AgentToolDefs()[i];
    EXPECT_EQ(tools[i]["name"], def.name);
    EXPECT_EQ(tools[i]["description"], def.description);
    EXPECT_EQ(tools[i]["inputSchema"], def.input_schema);
    EXPECT_EQ(tools[i]["inputSchema"]["type"], "object");
  }
}

TEST_F(McpServerTest, PingAnswersAnEmptyObject) {
  const json reply = Handle(Request(3, "ping"));
  EXPECT_EQ(reply,
            json({{"jsonrpc", "2.0"}, {"id", 3}, {"result", json::object()}}));
  EXPECT_TRUE(reply["result"].is_object());
}

TEST_F(McpServerTest, IdsOfEveryTypeAreEchoed) {
  for (const json& id : {json(0), json(42), json(-5), json(9007199254740993),
                         json(2.5), json("abc"), json("")}) {
    const json reply = Handle(Request(id, "ping"));
    EXPECT_EQ(reply["id"], id);
    EXPECT_EQ(reply["id"].type(), id.type()) << id.dump();
  }
  // And on errors.
  EXPECT_EQ(ErrorCode(Handle(Request("e-1", "nope")), "e-1"), -32601);
  EXPECT_EQ(ErrorCode(Handle(Request(77, "nope")), 77), -32601);
}

TEST_F(McpServerTest, ToolCallSuccessIsAResultWithTextAndStructuredContent) {
  const json reply =
      Handle(Call(10, "compile_kernel", {{"kernel_code", "source"}}));
  ASSERT_TRUE(reply.contains("result")) << reply.dump();
  const json& r = reply["result"];
  EXPECT_EQ(r["isError"], false);
  ASSERT_EQ(r["content"].size(), 1u);
  EXPECT_EQ(r["content"][0]["type"], "text");
  EXPECT_THAT(r["content"][0]["text"].get<std::string>(),
              HasSubstr("VERDICT: passed (compile_kernel"));
  EXPECT_EQ(r["structuredContent"]["id"], "j-1");
  EXPECT_EQ(r["structuredContent"]["kind"], "JOB_KIND_COMPILE");
  EXPECT_EQ(backend_.last_request.source(), "source");
  // No client: no session is created.
  ASSERT_EQ(backend_.sessions.size(), 1u);
  EXPECT_EQ(backend_.sessions[0], "");
  EXPECT_EQ(server_.session_id(), "");
}

TEST_F(McpServerTest, ToolCallWithoutArgumentsUsesAnEmptyObject) {
  const json reply =
      Handle(Request(11, "tools/call", {{"name", "get_problem"}}));
  EXPECT_EQ(reply["result"]["isError"], false) << reply.dump();
  EXPECT_THAT(reply["result"]["content"][0]["text"].get<std::string>(),
              HasSubstr("KERNEL CONTRACT"));
  EXPECT_EQ(reply["result"]["structuredContent"]["problem"]["name"],
            "gather_linear_fp32");
}

TEST_F(McpServerTest, FailedVerdictIsANormalResultWithIsError) {
  backend_.verdict = v1::VERDICT_FAILED;
  const json reply =
      Handle(Call(12, "run_correctness", {{"kernel_code", "source"}}));
  ASSERT_FALSE(reply.contains("error")) << reply.dump();
  EXPECT_EQ(reply["result"]["isError"], true);
  const std::string text = reply["result"]["content"][0]["text"];
  EXPECT_THAT(text, HasSubstr("VERDICT: failed"));
  EXPECT_THAT(text, HasSubstr("odd/b7: 3 of 56 outputs wrong"));
}

TEST_F(McpServerTest, RefusedCallIsANormalResultWithIsError) {
  backend_.specs_status =
      absl::FailedPreconditionError("no GPU worker is connected");
  const json reply = Handle(Call(13, "get_gpu_specs", json::object()));
  ASSERT_FALSE(reply.contains("error")) << reply.dump();
  EXPECT_EQ(reply["result"]["isError"], true);
  EXPECT_THAT(reply["result"]["content"][0]["text"].get<std::string>(),
              HasSubstr("FAILED_PRECONDITION: no GPU worker is connected"));
  EXPECT_EQ(reply["result"]["structuredContent"]["error"]["code"],
            "FAILED_PRECONDITION");
}

TEST_F(McpServerTest, ArgumentsSessionIdIsPassedOn) {
  Handle(Call(14, "compare_runs",
              {{"session_id", "s-given"}, {"turn_a", 1}, {"turn_b", 2}}));
  ASSERT_EQ(backend_.sessions.size(), 1u);
  EXPECT_EQ(backend_.sessions[0], "s-given");
}

TEST_F(McpServerTest, ParseErrorHasCodeMinus32700AndIdNull) {
  const json reply = McpServer::ParseErrorReply("bad");
  EXPECT_EQ(ErrorCode(reply, nullptr), -32700);
  EXPECT_THAT(reply["error"]["message"].get<std::string>(), HasSubstr("bad"));
}

TEST_F(McpServerTest, InvalidRequestsHaveCodeMinus32600) {
  // Not an object; a batch.
  EXPECT_EQ(ErrorCode(Handle(json("hello")), nullptr), -32600);
  const json batch = Handle(json::array({Request(1, "ping")}));
  EXPECT_EQ(ErrorCode(batch, nullptr), -32600);
  EXPECT_THAT(batch["error"]["message"].get<std::string>(),
              HasSubstr("batches"));
  // Wrong or missing "jsonrpc", with the id echoed.
  EXPECT_EQ(
      ErrorCode(Handle({{"jsonrpc", "1.0"}, {"id", 5}, {"method", "ping"}}), 5),
      -32600);
  EXPECT_EQ(ErrorCode(Handle({{"id", 6}, {"method", "ping"}}), 6), -32600);
  // An id that is neither a string nor a number.
  EXPECT_EQ(ErrorCode(Handle({{"jsonrpc", "2.0"},
                              {"id", json::array({1})},
                              {"method", "ping"}}),
                      nullptr),
            -32600);
  EXPECT_EQ(
      ErrorCode(
          Handle({{"jsonrpc", "2.0"}, {"id", nullptr}, {"method", "ping"}}),
          nullptr),
      -32600);
  // No method; a method that is not a string.
  EXPECT_EQ(ErrorCode(Handle({{"jsonrpc", "2.0"}, {"id", 8}}), 8), -32600);
  const json no_method =
      Handle({{"jsonrpc", "2.0"}, {"id", 9}, {"method", 12}});
  EXPECT_EQ(ErrorCode(no_method, 9), -32600);
  EXPECT_THAT(no_method["error"]["message"].get<std::string>(),
              HasSubstr("\"method\" must be a string"));
}

TEST_F(McpServerTest, UnknownMethodHasCodeMinus32601AndNamesIt) {
  const json reply = Handle(Request(20, "resources/list"));
  EXPECT_EQ(ErrorCode(reply, 20), -32601);
  EXPECT_THAT(reply["error"]["message"].get<std::string>(),
              HasSubstr("resources/list"));
  EXPECT_THAT(reply["error"]["message"].get<std::string>(),
              HasSubstr("tools/call"));
}

TEST_F(McpServerTest, InvalidParamsHaveCodeMinus32602WithTheReason) {
  struct Case {
    json params;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{{"name", "no_such_tool"}}, "unknown tool 'no_such_tool'"},
      {{{"arguments", json::object()}}, "needs params.name"},
      {{{"name", 5}}, "needs params.name"},
      {{{"name", "compile_kernel"}, {"arguments", "text"}},
       "arguments must be an object"},
      {{{"name", "compile_kernel"}, {"arguments", json::object()}},
       "missing required argument 'kernel_code'"},
      {{{"name", "compile_kernel"},
        {"arguments", {{"kernel_code", "x"}, {"colour", "red"}}}},
       "unknown argument 'colour'"},
      {{{"name", "run_correctness"},
        {"arguments", {{"kernel_code", "x"}, {"trials", "five"}}}},
       "'trials' must be an integer"},
      {{{"name", "compare_runs"}, {"arguments", {{"turn_a", 1}}}},
       "missing required argument 'turn_b'"},
  };
  int id = 100;
  for (const Case& c : cases) {
    const json reply = Handle(Request(id, "tools/call", c.params));
    EXPECT_EQ(ErrorCode(reply, id), -32602) << c.params.dump();
    EXPECT_THAT(reply["error"]["message"].get<std::string>(),
                HasSubstr(c.message))
        << c.params.dump();
    ++id;
  }
  // params that is not an object.
  const json reply = Handle({{"jsonrpc", "2.0"},
                             {"id", "p"},
                             {"method", "tools/call"},
                             {"params", json::array({1, 2})}});
  EXPECT_EQ(ErrorCode(reply, "p"), -32602);
  // None of them reached the backend.
  EXPECT_TRUE(backend_.sessions.empty());
}

TEST_F(McpServerTest, ServeWritesOneLinePerRequestAndNothingElse) {
  std::istringstream in(
      Request(1, "initialize", {{"protocolVersion", "2025-06-18"}}).dump() +
      "\n" +
      json({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}})
          .dump() +
      "\n\n   \n" + Request("two", "tools/list").dump() + "\r\n" +
      "{not json\n" + Call(3, "get_gpu_specs", json::object()).dump() + "\n" +
      Request(4, "ping").dump());  // The last line has no newline.
  std::ostringstream out;
  EXPECT_EQ(server_.Serve(in, out), 0);
  const std::string text = out.str();
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  std::vector<json> replies;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    json reply = json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(reply.is_discarded()) << "not JSON: " << line;
    ASSERT_EQ(reply["jsonrpc"], "2.0") << line;
    replies.push_back(reply);
  }
  ASSERT_EQ(replies.size(), 5u) << text;
  EXPECT_EQ(replies[0]["id"], 1);
  EXPECT_EQ(replies[0]["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(replies[1]["id"], "two");
  EXPECT_EQ(replies[1]["result"]["tools"].size(), 9u);
  EXPECT_EQ(ErrorCode(replies[2], nullptr), -32700);
  EXPECT_EQ(replies[3]["id"], 3);
  EXPECT_EQ(replies[3]["result"]["isError"], false);
  EXPECT_THAT(replies[3]["result"]["content"][0]["text"].get<std::string>(),
              HasSubstr("NVIDIA H200"));
  EXPECT_EQ(replies[4],
            json({{"jsonrpc", "2.0"}, {"id", 4}, {"result", json::object()}}));
}

// What crashed `kbctl mcp` on main: any deeply nested params, even on
// ping. Over-deep and over-long lines get an error and the server goes on.
TEST_F(McpServerTest, ServeSurvivesDeepNestingAndHugeLines) {
  const std::string deep =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
      "\"ping\",\"params\":" +
      std::string(100000, '[') + std::string(100000, ']') + "}";
  const std::string huge =
      Call(2, "compile_kernel", {{"kernel_code", std::string(3 << 20, 'x')}})
          .dump();
  std::istringstream in(deep + "\n" + huge + "\n" + Request(3, "ping").dump() +
                        "\n");
  std::ostringstream out;
  EXPECT_EQ(server_.Serve(in, out), 0);
  std::istringstream lines(out.str());
  std::vector<json> replies;
  std::string line;
  while (std::getline(lines, line)) replies.push_back(json::parse(line));
  ASSERT_EQ(replies.size(), 3u) << out.str().substr(0, 2000);
  EXPECT_EQ(ErrorCode(replies[0], nullptr), -32700);
  EXPECT_THAT(replies[0]["error"]["message"].get<std::string>(),
              HasSubstr("deep"));
  EXPECT_EQ(ErrorCode(replies[1], nullptr), -32600);
  EXPECT_THAT(replies[1]["error"]["message"].get<std::string>(),
              HasSubstr("bytes"));
  EXPECT_EQ(replies[2],
            json({{"jsonrpc", "2.0"}, {"id", 3}, {"result", json::object()}}));
}

TEST_F(McpServerTest, ServeReplacesInvalidUtf8InsteadOfFailing) {
  std::istringstream in(
      Call(1, "compile_kernel", {{"kernel_code", "x"}}).dump() + "\n");
  // The kernel's file name comes back in the text; make it invalid UTF-8.
  class Utf8Backend : public FakeBackend {
   public:
    absl::StatusOr<v1::Job> RunJob(v1::JobKind kind,
                                   const v1::KernelRequest& request) override {
      absl::StatusOr<v1::Job> job = FakeBackend::RunJob(kind, request);
      job->mutable_result()->set_message("bad byte \xff here");
      return job;
    }
  } utf8;
  utf8.verdict = v1::VERDICT_COMPILE_ERROR;
  McpServer server(utf8, nullptr, {});
  std::ostringstream out;
  EXPECT_EQ(server.Serve(in, out), 0);
  const json reply = json::parse(out.str());
  EXPECT_EQ(reply["result"]["isError"], true);
  EXPECT_THAT(reply["result"]["content"][0]["text"].get<std::string>(),
              HasSubstr("bad byte"));
}

TEST_F(McpServerTest, ServeReturnsTwoWhenTheOutputFails) {
  std::istringstream in(Request(1, "ping").dump() + "\n");
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  EXPECT_EQ(server_.Serve(in, out), 2);
}

}  // namespace
}  // namespace kbench
