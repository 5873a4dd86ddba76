// The compiler red-team suite of issue 13 (CPU only, no GPU): every kernel
// source of tests/adversarial/compile/ tries to make the compiler read a
// host file (/etc/passwd, /proc/self/environ, a canary file, the problem
// file with its hidden shapes, kbd's store, worker token and holdout
// secret) or flood its
// output. Each is sent
//   (a) to a CompileSandbox (real kbcompile children, as kbd runs them), and
//   (b) to a real kbd over HTTP POST /v1/tools/compile_kernel, gRPC
//       CompileKernel and MCP (kbctl mcp, tools/call compile_kernel),
// and no secret may appear in any reply, in the job and session views
// (gRPC GetJob/ListJobs, /api/jobs, /api/sessions), in kbd's and kbctl's
// logs or in kbd's SQLite files (read as bytes after kbd stops). Each
// attack must end as a normal refused or failed compile with a message,
// replies and logs stay bounded, and a valid kernel must compile right
// after it. See README.md beside this file; compile_baseline_test.cc
// checks that the attacks are live without the defences and that the
// promised headers compile.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "compiler/sandbox/compile_sandbox.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "testing/pipe_child.h"
#include "testing/process.h"
#include "tests/adversarial/compile/leak_cases.h"

namespace kbench::compile_leak {
namespace {

using ::kbench::testing::KbdProcess;
using ::kbench::testing::PipeChild;
using nlohmann::json;

// Replies, log growth per attack and store files stay under these.
constexpr size_t kMaxReplyBytes = 256 << 10;
constexpr size_t kMaxLogGrowthBytes = 1 << 20;
constexpr size_t kMaxStoreBytes = 32 << 20;

// ---------------------------------------------------------------------------
// (a) CompileSandbox with real kbcompile children.

class SandboxLeakTest : public ::testing::TestWithParam<Attack> {
 protected:
  static void SetUpTestSuite() {
    Env();
    sandbox_ = new CompileSandbox(SandboxOptions());
    start_ = new absl::Status(sandbox_->Start());
  }
  static void TearDownTestSuite() {
    delete sandbox_;
    delete start_;
  }
  static CompileSandbox* sandbox_;
  static absl::Status* start_;
};
CompileSandbox* SandboxLeakTest::sandbox_ = nullptr;
absl::Status* SandboxLeakTest::start_ = nullptr;

// True when `out` is a refusal or a failed compile with a message.
::testing::AssertionResult NormalFailure(
    const absl::StatusOr<CompileOutput>& out,
    const std::vector<Secret>& secrets) {
  if (!out.ok()) {
    const absl::StatusCode c = out.status().code();
    if (c != absl::StatusCode::kInvalidArgument &&
        c != absl::StatusCode::kResourceExhausted) {
      return ::testing::AssertionFailure()
             << "expected a refusal (INVALID_ARGUMENT or RESOURCE_EXHAUSTED), "
                "got "
             << absl::StatusCodeToString(c) << ": "
             << Shown(std::string(out.status().message()), secrets);
    }
    if (out.status().message().size() < 20) {
      return ::testing::AssertionFailure()
             << "refused without a useful message: " << out.status();
    }
    return ::testing::AssertionSuccess();
  }
  if (out->report.success()) {
    return ::testing::AssertionFailure() << "the attack compiled";
  }
  for (const v1::Diagnostic& d : out->report.diagnostics()) {
    if (d.severity() == "error" && !d.message().empty()) {
      return ::testing::AssertionSuccess();
    }
  }
  return ::testing::AssertionFailure() << "a failed compile with no error";
}

TEST_P(SandboxLeakTest, NothingLeaksAndTheNextCompileWorks) {
  const Attack& a = GetParam();
  ASSERT_TRUE(start_->ok()) << *start_;
  TempDir data;
  std::vector<Secret> secrets = Env().secrets;
  Env().FakeDataDir(data.path() + "/data", &secrets);
  const absl::StatusOr<CompileOutput> out = sandbox_->Compile(
      AttackSource(a, data.path() + "/data"), AttackFilename(a), "sm_90");
  EXPECT_TRUE(NormalFailure(out, secrets)) << "vector " << a.name;
  const std::string reply =
      out.ok() ? out->report.DebugString() : out.status().ToString();
  Outcome(a.name, "CompileSandbox",
          out.ok() ? absl::StrCat("compile failed=", !out->report.success(),
                                  ": ", out->report.log())
                   : out.status().ToString(),
          secrets);
  EXPECT_NO_LEAK(reply, secrets, false, a.name, "CompileSandbox");
  EXPECT_LE(reply.size(), kMaxReplyBytes)
      << "vector " << a.name << ": the sandbox's reply is unbounded";

  const absl::StatusOr<CompileOutput> next =
      sandbox_->Compile(FreshValidKernel(a.name), "kernel.cu", "sm_90");
  ASSERT_TRUE(next.ok()) << "after " << a.name << ": " << next.status();
  EXPECT_TRUE(next->report.success())
      << "after " << a.name << ": " << next->report.log();
}

// ---------------------------------------------------------------------------
// (b) A real kbd, over gRPC and HTTP; one kbd per attack so that its log and
// store show only that attack.

class KbdLeakTest : public ::testing::TestWithParam<Attack> {
 protected:
  void SetUp() override {
    Env();
    auto kbd = KbdProcess::Start(
        {{"--compile-cpu-limit-s=15", "--compile-wall-limit-s=10"}, ""});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = std::move(*kbd);
    ASSERT_FALSE(kbd_->http_address().empty()) << kbd_->Log();
    stub_ = v1::Kbench::NewStub(grpc::CreateChannel(
        kbd_->address(), grpc::InsecureChannelCredentials()));
    const std::string& addr = kbd_->http_address();
    int port = 0;
    ASSERT_TRUE(absl::SimpleAtoi(addr.substr(addr.rfind(':') + 1), &port));
    http_ = std::make_unique<httplib::Client>("127.0.0.1", port);
    http_->set_connection_timeout(10);
    http_->set_read_timeout(120);
    secrets_ = Env().secrets;
    // The worker token kbd generated, else one the test puts where kbd
    // would keep it (the attack reads that path either way).
    const std::string token_path = kbd_->data_dir() + "/worker.token";
    std::string token(absl::StripAsciiWhitespace(ReadBytes(token_path)));
    if (token.empty()) {
      token = "kbworkertoken" + RandomHex(20);
      WriteFile(token_path, token + "\n");
    }
    if (token.size() >= 8) secrets_.push_back({"the worker token", token});
    // The secret each submission's hidden cases are drawn from.
    const std::string holdout(absl::StripAsciiWhitespace(
        ReadBytes(kbd_->data_dir() + "/holdout.secret")));
    ASSERT_GE(holdout.size(), 32u) << "kbd made no holdout secret";
    secrets_.push_back({"the holdout secret", holdout});
    // A victim's kernel in the store, with a secret in a comment.
    v1::CompileKernelResponse resp;
    ASSERT_TRUE(GrpcCompile(absl::StrCat(FreshValidKernel("victim"), "// ",
                                         Env().victim, "\n"),
                            "victim.cu", "victim", &resp)
                    .ok());
  }

  grpc::Status GrpcCompile(const std::string& source,
                           const std::string& filename,
                           const std::string& session,
                           v1::CompileKernelResponse* resp) {
    v1::CompileKernelRequest req;
    req.mutable_kernel()->set_source(source);
    req.mutable_kernel()->set_filename(filename);
    req.mutable_kernel()->set_session_id(session);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(120));
    return stub_->CompileKernel(&ctx, req, resp);
  }
  httplib::Result HttpCompile(const std::string& source,
                              const std::string& session) {
    return http_->Post(
        "/v1/tools/compile_kernel", {{"X-Kbench-Session", session}},
        json({{"kernel_code", source}}).dump(), "application/json");
  }
  // Sends one JSON-RPC request to `mcp` and returns its reply line ("" on
  // timeout).
  std::string McpCall(PipeChild* mcp, const std::string& method,
                      const json& params) {
    const int id = ++mcp_id_;
    EXPECT_TRUE(mcp->WriteLine(json({{"jsonrpc", "2.0"},
                                     {"id", id},
                                     {"method", method},
                                     {"params", params}})
                                   .dump())
                    .ok());
    absl::StatusOr<std::string> line = mcp->ReadLine(absl::Seconds(120));
    EXPECT_TRUE(line.ok()) << method << ": " << line.status();
    return line.ok() ? *line : "";
  }
  std::string HttpGet(const std::string& path) {
    httplib::Result r = http_->Get(path);
    EXPECT_TRUE(r) << path;
    return r ? r->body : "";
  }

  std::unique_ptr<KbdProcess> kbd_;
  std::unique_ptr<v1::Kbench::Stub> stub_;
  std::unique_ptr<httplib::Client> http_;
  std::vector<Secret> secrets_;
  int mcp_id_ = 0;
};

TEST_P(KbdLeakTest, NothingLeaksAnywhereAndKbdKeepsServing) {
  const Attack& a = GetParam();
  const std::string source = AttackSource(a, kbd_->data_dir());
  const size_t log_before = kbd_->Log().size();
  const std::string http_session = "attack-http";
  const std::string grpc_session = "attack-grpc";
  const std::string mcp_session = "attack-mcp";

  // HTTP tool call: a 200 result with isError, or a JSON 4xx refusal.
  {
    httplib::Result r = HttpCompile(source, http_session);
    ASSERT_TRUE(r) << a.name
                   << ": no HTTP reply: " << httplib::to_string(r.error());
    Outcome(a.name, "HTTP", absl::StrCat(r->status, " ", r->body), secrets_);
    EXPECT_NO_LEAK(r->body, secrets_, false, a.name, "HTTP compile_kernel");
    EXPECT_LE(r->body.size(), kMaxReplyBytes) << a.name << ": HTTP reply";
    const json body = json::parse(r->body, nullptr, false);
    ASSERT_FALSE(body.is_discarded()) << a.name << ": HTTP " << r->status;
    if (r->status == 200) {
      EXPECT_EQ(body.value("isError", false), true)
          << a.name << ": the attack compiled over HTTP";
      const json& text = body["content"][0]["text"];
      EXPECT_TRUE(text.is_string() && text.get<std::string>().size() >= 20)
          << a.name << ": no useful message over HTTP";
    } else {
      EXPECT_TRUE(r->status >= 400 && r->status < 500)
          << a.name << ": HTTP " << r->status;
      EXPECT_TRUE(body["error"]["message"].is_string())
          << a.name << ": HTTP " << r->status << " without a message";
    }
    httplib::Result next = HttpCompile(FreshValidKernel(a.name), "ok-http");
    ASSERT_TRUE(next) << "after " << a.name << ": HTTP is down";
    const json nb = json::parse(next->body, nullptr, false);
    EXPECT_EQ(next->status, 200) << "after " << a.name;
    EXPECT_FALSE(nb.is_discarded() || nb.value("isError", true))
        << "after " << a.name << ": a valid kernel failed over HTTP";
  }

  // gRPC CompileKernel: INVALID_ARGUMENT / RESOURCE_EXHAUSTED, or OK with
  // a failed compile report.
  {
    v1::CompileKernelResponse resp;
    const grpc::Status s =
        GrpcCompile(source, AttackFilename(a), grpc_session, &resp);
    const std::string reply = absl::StrCat(
        s.error_message(), "\n", s.error_details(), "\n", resp.DebugString());
    Outcome(a.name, "gRPC",
            s.ok() ? resp.compile().log()
                   : absl::StrCat(s.error_code(), " ", s.error_message()),
            secrets_);
    EXPECT_NO_LEAK(reply, secrets_, false, a.name, "gRPC CompileKernel");
    EXPECT_LE(reply.size(), kMaxReplyBytes) << a.name << ": gRPC reply";
    if (s.ok()) {
      EXPECT_FALSE(resp.compile().success())
          << a.name << ": the attack compiled over gRPC";
      EXPECT_GT(resp.compile().diagnostics_size(), 0) << a.name;
    } else {
      EXPECT_TRUE(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
                  s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED)
          << a.name << ": gRPC " << s.error_code() << " "
          << Shown(s.error_message(), secrets_);
      EXPECT_GE(s.error_message().size(), 20u) << a.name;
      // Not kbd's answer but gRPC's own, when the reply broke its limits.
      EXPECT_FALSE(absl::StrContains(s.error_message(), "metadata size") ||
                   absl::StrContains(s.error_message(), "larger than max"))
          << a.name << ": kbd's reply broke gRPC's size limits: "
          << Shown(s.error_message(), secrets_);
    }
    v1::CompileKernelResponse ok;
    const grpc::Status next =
        GrpcCompile(FreshValidKernel(a.name), "kernel.cu", "ok-grpc", &ok);
    ASSERT_TRUE(next.ok()) << "after " << a.name << ": "
                           << next.error_message();
    EXPECT_TRUE(ok.compile().success()) << "after " << a.name;
  }

  // MCP: kbctl mcp (a gRPC client of kbd) answers a tools/call with a
  // result that has isError, or a JSON-RPC error with a message.
  {
    auto mcp = PipeChild::Start(
        {::kbench::testing::BinDir() + "/kbctl", "mcp", "--server",
         kbd_->address(), "--session", mcp_session},
        {{"KBENCH_SESSION", ""}});
    ASSERT_TRUE(mcp.ok()) << mcp.status();
    McpCall(
        mcp->get(), "initialize",
        {{"protocolVersion", "2025-06-18"},
         {"capabilities", json::object()},
         {"clientInfo", {{"name", "compile_leak_test"}, {"version", "1"}}}});
    const std::string line = McpCall(
        mcp->get(), "tools/call",
        {{"name", "compile_kernel"}, {"arguments", {{"kernel_code", source}}}});
    Outcome(a.name, "MCP", line, secrets_);
    EXPECT_NO_LEAK(line, secrets_, false, a.name, "MCP tools/call");
    EXPECT_LE(line.size(), kMaxReplyBytes) << a.name << ": MCP reply";
    const json reply = json::parse(line, nullptr, false);
    ASSERT_FALSE(reply.is_discarded()) << a.name << ": MCP reply not JSON";
    if (reply.contains("result")) {
      EXPECT_EQ(reply["result"].value("isError", false), true)
          << a.name << ": the attack compiled over MCP";
    } else {
      EXPECT_TRUE(reply["error"]["message"].is_string())
          << a.name << ": MCP error without a message";
    }
    const json next = json::parse(
        McpCall(mcp->get(), "tools/call",
                {{"name", "compile_kernel"},
                 {"arguments", {{"kernel_code", FreshValidKernel(a.name)}}}}),
        nullptr, false);
    EXPECT_TRUE(!next.is_discarded() && next.contains("result") &&
                !next["result"].value("isError", true))
        << "after " << a.name << ": a valid kernel failed over MCP";
    (*mcp)->CloseStdin();
    (*mcp)->Wait(absl::Seconds(10));
    EXPECT_NO_LEAK((*mcp)->Stderr(), secrets_, false, a.name,
                   "kbctl mcp's log (stderr)");
  }

  // The views of the attack's jobs and sessions.
  for (const std::string& session : {http_session, grpc_session, mcp_session}) {
    v1::ListJobsRequest req;
    req.set_session_id(session);
    req.set_page_size(200);
    v1::ListJobsResponse list;
    grpc::ClientContext ctx;
    EXPECT_TRUE(stub_->ListJobs(&ctx, req, &list).ok())
        << a.name << ": ListJobs of session " << session << " fails";
    EXPECT_NO_LEAK(list.DebugString(), secrets_, false, a.name,
                   "gRPC ListJobs");
    for (const v1::Job& job : list.jobs()) {
      v1::GetJobRequest greq;
      greq.set_job_id(job.id());
      v1::GetJobResponse got;
      grpc::ClientContext gctx;
      EXPECT_TRUE(stub_->GetJob(&gctx, greq, &got).ok()) << a.name;
      EXPECT_NO_LEAK(got.DebugString(), secrets_, false, a.name, "gRPC GetJob");
      EXPECT_NO_LEAK(HttpGet("/api/jobs/" + job.id()), secrets_, false, a.name,
                     "GET /api/jobs/{id}");
    }
    EXPECT_NO_LEAK(HttpGet("/api/jobs?session=" + session), secrets_, false,
                   a.name, "GET /api/jobs");
    EXPECT_NO_LEAK(HttpGet("/api/sessions/" + session), secrets_, false, a.name,
                   "GET /api/sessions/{id}");
  }

  // kbd's log (kbcompile logs there too) and its store, after it stops.
  ASSERT_EQ(kbd_->Stop(), 0) << a.name << ": kbd did not stop cleanly";
  const std::string log = kbd_->Log();
  EXPECT_NO_LEAK(log, secrets_, false, a.name, "kbd's log (stderr)");
  EXPECT_LE(log.size() - std::min(log.size(), log_before), kMaxLogGrowthBytes)
      << a.name << ": kbd's log grew without bound";
  size_t store_bytes = 0;
  bool victim_stored = false;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    const std::string bytes =
        ReadBytes(absl::StrCat(kbd_->data_dir(), "/kbench.db", suffix));
    store_bytes += bytes.size();
    victim_stored = victim_stored || absl::StrContains(bytes, Env().victim);
    EXPECT_NO_LEAK(bytes, secrets_, true, a.name,
                   absl::StrCat("the store file kbench.db", suffix));
  }
  EXPECT_LE(store_bytes, kMaxStoreBytes) << a.name << ": the store";
  // Else the store check above is blind (files not found, or sources no
  // longer stored as plain bytes): mend the check.
  EXPECT_TRUE(victim_stored) << "the victim's source is not in the store files";
}

std::string AttackName(const ::testing::TestParamInfo<Attack>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Vectors, SandboxLeakTest,
                         ::testing::ValuesIn(Attacks()), AttackName);
INSTANTIATE_TEST_SUITE_P(Vectors, KbdLeakTest, ::testing::ValuesIn(Attacks()),
                         AttackName);

}  // namespace
}  // namespace kbench::compile_leak
