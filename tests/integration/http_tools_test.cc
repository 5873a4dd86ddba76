// The agent tools over HTTP/JSON, with real HTTP requests on loopback
// against a kbd process (no GPU): the tool list, tool calls and their
// MCP-shaped results, sessions from the header, protocol errors (404, 400,
// 405, 413, 415) as JSON, and curl. The hostile cases (Host, Origin, deep
// JSON, hang-ups, load) are in http_hardening_test.cc.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "testing/process.h"

namespace kbench {
namespace {

using ::kbench::testing::KbdProcess;
using ::kbench::testing::ReadSourceFile;
using nlohmann::json;

const char kNaive[] = "kernels/examples/gather_linear_naive.cu";
const char kSessionHeader[] = "X-Kbench-Session";

// A kernel whose line 3 does not compile.
const char kBrokenKernel[] =
    "// @kb launch gather_linear grid(B) block(32)\n"
    "extern \"C\" __global__ void gather_linear(const float* x, const float* "
    "w, const float* bias, float* out, int R, int B, int H, int K) {\n"
    "  out[0] = undefined_name;\n"
    "}\n";

class HttpToolsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto kbd = KbdProcess::Start({});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = kbd->release();
    ASSERT_FALSE(kbd_->http_address().empty()) << kbd_->Log();
  }
  static void TearDownTestSuite() {
    delete kbd_;
    kbd_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(kbd_, nullptr);
    const std::string& addr = kbd_->http_address();
    const size_t colon = addr.rfind(':');
    int port = 0;
    ASSERT_TRUE(absl::SimpleAtoi(addr.substr(colon + 1), &port)) << addr;
    client_ = std::make_unique<httplib::Client>(addr.substr(0, colon), port);
    client_->set_connection_timeout(10);
    client_->set_read_timeout(120);
    client_->set_write_timeout(60);
  }

  // Checks the reply's transport, then parses its body as JSON.
  static json Body(const httplib::Result& res) {
    EXPECT_TRUE(res) << "no response: " << httplib::to_string(res.error());
    if (!res) return json();
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/json")
        << res->status << " " << res->body;
    json body = json::parse(res->body, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(body.is_discarded()) << res->body;
    return body;
  }

  httplib::Result Post(const std::string& tool, const std::string& body,
                       const httplib::Headers& headers = {}) {
    return client_->Post("/v1/tools/" + tool, headers, body,
                         "application/json");
  }
  httplib::Result PostJson(const std::string& tool, const json& args,
                           const httplib::Headers& headers = {}) {
    return Post(tool, args.dump(), headers);
  }

  // A 200 result in the MCP shape; returns it.
  static json ToolResult(const httplib::Result& res) {
    json body = Body(res);
    if (!res) return body;
    EXPECT_EQ(res->status, 200) << res->body;
    EXPECT_TRUE(body["content"].is_array()) << res->body;
    EXPECT_EQ(body["content"].size(), 1u);
    EXPECT_EQ(body["content"][0]["type"], "text");
    EXPECT_TRUE(body["content"][0]["text"].is_string());
    EXPECT_TRUE(body["structuredContent"].is_object());
    EXPECT_TRUE(body["isError"].is_boolean());
    return body;
  }
  static std::string Text(const json& result) {
    const json& t = result["content"][0]["text"];
    return t.is_string() ? t.get<std::string>() : "";
  }

  // A JSON error reply with HTTP status `status` and error code `code`;
  // returns its message.
  static std::string ErrorMessage(const httplib::Result& res, int status,
                                  const std::string& code) {
    json body = Body(res);
    if (!res) return "";
    EXPECT_EQ(res->status, status) << res->body;
    EXPECT_EQ(body["error"]["code"], code) << res->body;
    EXPECT_EQ(body["error"]["status"], status) << res->body;
    const json& m = body["error"]["message"];
    EXPECT_TRUE(m.is_string()) << res->body;
    return m.is_string() ? m.get<std::string>() : "";
  }

  static v1::GetSessionResponse GetSession(const std::string& id,
                                           grpc::Status* status) {
    auto stub = v1::Kbench::NewStub(grpc::CreateChannel(
        kbd_->address(), grpc::InsecureChannelCredentials()));
    v1::GetSessionRequest req;
    req.set_session_id(id);
    v1::GetSessionResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(30));
    *status = stub->GetSession(&ctx, req, &resp);
    return resp;
  }

  static KbdProcess* kbd_;
  std::unique_ptr<httplib::Client> client_;
};

KbdProcess* HttpToolsTest::kbd_ = nullptr;

TEST_F(HttpToolsTest, HealthzIsOk) {
  httplib::Result res = client_->Get("/healthz");
  json body = Body(res);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(body, json({{"status", "ok"}}));
}

TEST_F(HttpToolsTest, ToolListHasTheEightToolsWithSchemas) {
  httplib::Result res = client_->Get("/v1/tools");
  json body = Body(res);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  ASSERT_TRUE(body["tools"].is_array()) << res->body;
  std::set<std::string> names;
  for (const json& t : body["tools"]) {
    names.insert(t["name"].get<std::string>());
    EXPECT_TRUE(t["description"].is_string());
    EXPECT_EQ(t["inputSchema"]["type"], "object") << t.dump();
    EXPECT_TRUE(t["inputSchema"]["properties"].is_object()) << t.dump();
  }
  EXPECT_EQ(names, std::set<std::string>(
                       {"get_gpu_specs", "get_problem", "list_problems",
                        "compile_kernel", "run_correctness", "profile_kernel",
                        "submit_kernel", "sanitize_kernel", "compare_runs"}));
  EXPECT_EQ(body["tools"].size(), 9u);
}

TEST_F(HttpToolsTest, ListProblemsBySuite) {
  json r = ToolResult(PostJson("list_problems", {{"suite", "collectives"}}));
  EXPECT_EQ(r["isError"], false) << r.dump();
  const std::string text = r["content"][0]["text"];
  EXPECT_NE(text.find("PROBLEMS: 2\n- gather_linear_bf16"), std::string::npos)
      << text;
  EXPECT_NE(text.find("suites: collectives\n"), std::string::npos) << text;
  EXPECT_EQ(r["structuredContent"]["problems"].size(), 2u);
  json unknown = ToolResult(PostJson("list_problems", {{"suite", "nope"}}));
  EXPECT_EQ(unknown["isError"], true);
  const std::string why = unknown["content"][0]["text"];
  EXPECT_NE(why.find("NOT_FOUND: unknown suite 'nope'"), std::string::npos)
      << why;
}

TEST_F(HttpToolsTest, CompileNaiveKernelPasses) {
  json r = ToolResult(
      PostJson("compile_kernel", {{"kernel_code", ReadSourceFile(kNaive)}}));
  EXPECT_EQ(r["isError"], false);
  EXPECT_TRUE(absl::StartsWith(Text(r), "VERDICT: passed")) << Text(r);
  const json& kernels = r["structuredContent"]["result"]["compile"]["kernels"];
  ASSERT_TRUE(kernels.is_array()) << r.dump();
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0]["name"], "gather_linear");
  EXPECT_GT(kernels[0]["registers"].get<int>(), 0);
  EXPECT_EQ(r["structuredContent"]["result"]["verdict"], "VERDICT_PASSED");
}

TEST_F(HttpToolsTest, CompileErrorIsAnErrorResultWithTheLine) {
  json r =
      ToolResult(PostJson("compile_kernel", {{"kernel_code", kBrokenKernel}}));
  EXPECT_EQ(r["isError"], true);
  EXPECT_NE(Text(r).find("kernel.cu:3: error"), std::string::npos) << Text(r);
  EXPECT_NE(Text(r).find("undefined_name"), std::string::npos) << Text(r);
}

TEST_F(HttpToolsTest, RunCorrectnessWithoutGpuIsFailedPrecondition) {
  json r = ToolResult(
      PostJson("run_correctness", {{"kernel_code", ReadSourceFile(kNaive)}}));
  EXPECT_EQ(r["isError"], true);
  EXPECT_NE(Text(r).find("FAILED_PRECONDITION"), std::string::npos) << Text(r);
  EXPECT_EQ(r["structuredContent"]["error"]["code"], "FAILED_PRECONDITION")
      << r.dump();
}

TEST_F(HttpToolsTest, GetProblemWithEmptyBodyHasTheContract) {
  // No body at all: the arguments are {}.
  json r = ToolResult(
      client_->Post("/v1/tools/get_problem", "", "application/json"));
  EXPECT_EQ(r["isError"], false);
  EXPECT_NE(Text(r).find("KERNEL CONTRACT"), std::string::npos) << Text(r);
  EXPECT_EQ(r["structuredContent"]["problem"]["name"], "gather_linear_fp32");
  // A POST that does not say it is JSON is refused, body or not.
  ErrorMessage(client_->Post("/v1/tools/get_problem"), 415,
               "UNSUPPORTED_MEDIA_TYPE");
  // An explicit problem argument.
  json named =
      ToolResult(PostJson("get_problem", {{"problem", "gather_linear_fp32"}}));
  EXPECT_NE(Text(named).find("KERNEL CONTRACT"), std::string::npos);
  // An unknown problem is the tool's own error: 200, isError.
  json unknown = ToolResult(PostJson("get_problem", {{"problem", "nope"}}));
  EXPECT_EQ(unknown["isError"], true);
  EXPECT_NE(Text(unknown).find("NOT_FOUND"), std::string::npos)
      << Text(unknown);
}

TEST_F(HttpToolsTest, SessionHeaderRecordsTheTurns) {
  const std::string sid = "s-http-header";
  const httplib::Headers h = {{kSessionHeader, sid}};
  ToolResult(Post("get_problem", "{}", h));
  json c = ToolResult(
      PostJson("compile_kernel", {{"kernel_code", ReadSourceFile(kNaive)}}, h));
  EXPECT_EQ(c["structuredContent"]["session_id"], sid) << c.dump();

  grpc::Status status;
  v1::GetSessionResponse s = GetSession(sid, &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(s.turns_size(), 2);
  EXPECT_EQ(s.turns(0).tool(), "get_problem");
  EXPECT_EQ(s.turns(1).tool(), "compile_kernel");
  EXPECT_EQ(s.turns(1).verdict(), v1::VERDICT_PASSED);
  EXPECT_FALSE(s.turns(1).job_id().empty());
}

TEST_F(HttpToolsTest, SessionArgumentWinsOverTheHeader) {
  ToolResult(PostJson("get_problem", {{"session_id", "s-http-arg"}},
                      {{kSessionHeader, "s-http-ignored"}}));
  grpc::Status status;
  v1::GetSessionResponse s = GetSession("s-http-arg", &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(s.turns_size(), 1);
  GetSession("s-http-ignored", &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(HttpToolsTest, UnknownToolIsNotFoundListingTheTools) {
  const std::string m =
      ErrorMessage(PostJson("compile", json::object()), 404, "NOT_FOUND");
  EXPECT_NE(m.find("unknown tool 'compile'"), std::string::npos) << m;
  EXPECT_NE(m.find("compile_kernel"), std::string::npos) << m;
}

TEST_F(HttpToolsTest, MalformedJsonIsInvalidArgument) {
  const std::string m = ErrorMessage(
      Post("compile_kernel", "{\"kernel_code\":"), 400, "INVALID_ARGUMENT");
  EXPECT_NE(m.find("not valid JSON"), std::string::npos) << m;
  EXPECT_NE(m.find("column"), std::string::npos) << m;
}

TEST_F(HttpToolsTest, ArgumentsThatBreakTheSchemaAreInvalidArgument) {
  std::string m = ErrorMessage(PostJson("compile_kernel", {{"kernel_code", 5}}),
                               400, "INVALID_ARGUMENT");
  EXPECT_NE(m.find("'kernel_code'"), std::string::npos) << m;
  EXPECT_NE(m.find("string"), std::string::npos) << m;

  m = ErrorMessage(PostJson("compare_runs", {{"turn_a", "1"}, {"turn_b", 2}}),
                   400, "INVALID_ARGUMENT");
  EXPECT_NE(m.find("'turn_a'"), std::string::npos) << m;
  EXPECT_NE(m.find("integer"), std::string::npos) << m;

  m = ErrorMessage(PostJson("compile_kernel", json::object()), 400,
                   "INVALID_ARGUMENT");
  EXPECT_NE(m.find("missing required argument 'kernel_code'"),
            std::string::npos)
      << m;

  m = ErrorMessage(
      PostJson("compile_kernel", {{"kernel_code", "x"}, {"kernel", "x"}}), 400,
      "INVALID_ARGUMENT");
  EXPECT_NE(m.find("unknown argument 'kernel'"), std::string::npos) << m;

  m = ErrorMessage(Post("get_problem", "[1, 2]"), 400, "INVALID_ARGUMENT");
  EXPECT_NE(m.find("must be a JSON object"), std::string::npos) << m;
}

TEST_F(HttpToolsTest, OversizedBodyIs413) {
  // Over 1 MiB, as one valid JSON object.
  const std::string body =
      json({{"kernel_code", std::string((1 << 20) + 16, 'a')}}).dump();
  const std::string m =
      ErrorMessage(Post("compile_kernel", body), 413, "PAYLOAD_TOO_LARGE");
  EXPECT_NE(m.find("1048576"), std::string::npos) << m;
}

TEST_F(HttpToolsTest, WrongMethodIs405) {
  httplib::Result res = client_->Get("/v1/tools/compile_kernel");
  const std::string m = ErrorMessage(res, 405, "METHOD_NOT_ALLOWED");
  EXPECT_NE(m.find("POST /v1/tools/{name}"), std::string::npos) << m;
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value("Allow"), "POST");
  res = client_->Delete("/healthz");
  ErrorMessage(res, 405, "METHOD_NOT_ALLOWED");
  res = client_->Post("/v1/tools", "{}", "application/json");
  ErrorMessage(res, 405, "METHOD_NOT_ALLOWED");
}

TEST_F(HttpToolsTest, UnknownPathIs404) {
  std::string m = ErrorMessage(client_->Get("/v2/tools"), 404, "NOT_FOUND");
  EXPECT_NE(m.find("/v2/tools"), std::string::npos) << m;
  EXPECT_NE(m.find("POST /v1/tools/{name}"), std::string::npos) << m;
  ErrorMessage(
      client_->Post("/v1/tools/compile_kernel/extra", "{}", "application/json"),
      404, "NOT_FOUND");
}

// Every kind of bad request, then the server still answers.
TEST_F(HttpToolsTest, ServesAfterBadRequests) {
  ErrorMessage(Post("nope", "{}"), 404, "NOT_FOUND");
  ErrorMessage(Post("compile_kernel", "\xff\xfe{"), 400, "INVALID_ARGUMENT");
  ErrorMessage(Post("compile_kernel", "{\"kernel_code\": \"\xff\"}"), 400,
               "INVALID_ARGUMENT");
  ErrorMessage(Post("compile_kernel", std::string(100000, '[')), 400,
               "INVALID_ARGUMENT");
  ErrorMessage(Post("compare_runs", "{\"turn_a\": 1e400, \"turn_b\": 1}"), 400,
               "INVALID_ARGUMENT");
  ErrorMessage(Post("compile_kernel", std::string((1 << 20) + 1, ' ')), 413,
               "PAYLOAD_TOO_LARGE");
  ErrorMessage(client_->Put("/v1/tools/compile_kernel", "{}", "text/plain"),
               405, "METHOD_NOT_ALLOWED");
  ErrorMessage(client_->Get("/../../etc/passwd"), 404, "NOT_FOUND");
  // A kernel of stray bytes compiles to an error, and the reply is still
  // valid JSON.
  json r = ToolResult(
      PostJson("compile_kernel", {{"kernel_code", std::string("\x01\x02")}}));
  EXPECT_EQ(r["isError"], true);

  httplib::Result res = client_->Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  json ok = ToolResult(
      PostJson("compile_kernel", {{"kernel_code", ReadSourceFile(kNaive)}}));
  EXPECT_EQ(ok["isError"], false) << Text(ok);
  EXPECT_TRUE(kbd_->child()->Running());
}

// `curl -H 'Content-Type: application/json' -d @file`, including a body
// over 8 KiB (a kernel with a long comment).
TEST_F(HttpToolsTest, UsableWithCurl) {
  const std::string curl = "/usr/bin/curl";
  if (!std::filesystem::exists(curl)) GTEST_SKIP() << "no " << curl;
  testing::TempDir dir;
  const std::string small = ReadSourceFile(kNaive);
  const std::string large = small + "// " + std::string(20000, 'x') + "\n";
  for (const std::string& source : {small, large}) {
    const std::string file = dir.path() + "/args.json";
    std::ofstream(file) << json({{"kernel_code", source}}).dump();
    testing::CommandResult out = testing::RunCommand(
        {curl, "-sS", "-H", "Content-Type: application/json", "-H",
         std::string(kSessionHeader) + ": s-http-curl", "-d", "@" + file,
         "http://" + kbd_->http_address() + "/v1/tools/compile_kernel"});
    ASSERT_EQ(out.exit_code, 0) << out.err;
    json r = json::parse(out.out, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(r.is_discarded()) << out.out;
    EXPECT_EQ(r["isError"], false) << out.out;
    EXPECT_TRUE(absl::StartsWith(r["content"][0]["text"].get<std::string>(),
                                 "VERDICT: passed"))
        << out.out;
  }
  // Without the header curl sends a form (the CSRF simple request): 415,
  // with the flag to add in the message, and no turn recorded.
  const std::string file = dir.path() + "/args.json";
  testing::CommandResult form = testing::RunCommand(
      {curl, "-sS", "-H", std::string(kSessionHeader) + ": s-http-curl", "-d",
       "@" + file,
       "http://" + kbd_->http_address() + "/v1/tools/compile_kernel"});
  ASSERT_EQ(form.exit_code, 0) << form.err;
  json refused = json::parse(form.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_EQ(refused["error"]["status"], 415) << form.out;
  EXPECT_NE(refused["error"]["message"].get<std::string>().find(
                "-H 'Content-Type: application/json'"),
            std::string::npos)
      << form.out;

  grpc::Status status;
  v1::GetSessionResponse s = GetSession("s-http-curl", &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(s.turns_size(), 2);
}

TEST(HttpListenTest, PortInUseFailsStartupNamingTheFlag) {
  auto first = KbdProcess::Start({});
  ASSERT_TRUE(first.ok()) << first.status();
  testing::TempDir dir;
  auto second = testing::Child::Start(
      {testing::BinDir() + "/kbd", "--listen", "127.0.0.1:0", "--data-dir",
       dir.path() + "/data", "--http-listen", (*first)->http_address()});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ((*second)->Wait(absl::Seconds(60)), 2) << (*second)->Stderr();
  const std::string err = (*second)->Stderr();
  EXPECT_NE(err.find("--http-listen"), std::string::npos) << err;
  EXPECT_NE(err.find("in use"), std::string::npos) << err;
  EXPECT_NE(err.find("off"), std::string::npos) << err;
  // The first one is unaffected.
  httplib::Client c("http://" + (*first)->http_address());
  httplib::Result res = c.Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST(HttpListenTest, OffServesGrpcOnly) {
  KbdProcess::Options options;
  options.extra_args = {"--http-listen=off"};
  auto kbd = KbdProcess::Start(options);
  ASSERT_TRUE(kbd.ok()) << kbd.status();
  EXPECT_TRUE((*kbd)->http_address().empty());
  EXPECT_NE((*kbd)->Log().find("HTTP tools off"), std::string::npos)
      << (*kbd)->Log();
  EXPECT_EQ((*kbd)->Stop(), 0) << (*kbd)->Log();
}

TEST(HttpListenTest, MalformedAddressFailsStartup) {
  testing::TempDir dir;
  testing::CommandResult r = testing::RunCommand(
      {testing::BinDir() + "/kbd", "--listen", "127.0.0.1:0", "--data-dir",
       dir.path() + "/data", "--http-listen", "localhost"},
      {}, absl::Seconds(60));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("HOST:PORT"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kbench
