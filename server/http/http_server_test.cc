// HttpServer over a fake backend: start-up errors (bad address, port in
// use, started twice, bad limits), stopping, the translation of requests
// (session header, arguments) and results (MCP shape, refused calls); and,
// as an attacker would try them, the guard on every route and hostile
// bodies and headers. Threads, limits and connections are in
// http_connection_server_test.cc, http_task_queue_test.cc and
// http_call_limiter_test.cc.
#include "server/http/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"
#include "server/http/http_fixtures.h"

namespace kbench {
namespace {

using http_fixtures::ErrorCode;
using http_fixtures::ErrorMessage;
using http_fixtures::Loopback;
using http_fixtures::Parse;
using nlohmann::json;

class FakeBackend : public AgentToolBackend {
 public:
  absl::StatusOr<v1::GetGpuSpecsResponse> GetGpuSpecs(
      const std::string& session_id) override {
    return absl::UnavailableError("no GPU here");
  }
  absl::StatusOr<v1::ListProblemsResponse> ListProblems(
      const std::string& suite) override {
    v1::ListProblemsResponse r;
    r.add_problems()->set_name(suite.empty() ? "all" : suite);
    return r;
  }
  absl::StatusOr<v1::GetProblemResponse> GetProblem(
      const std::string& name, const std::string& session_id) override {
    absl::MutexLock lock(&mu_);
    last_session_ = session_id;
    v1::GetProblemResponse r;
    r.mutable_problem()->set_name(name.empty() ? "default_problem" : name);
    return r;
  }
  absl::StatusOr<v1::Job> RunJob(v1::JobKind kind,
                                 const v1::KernelRequest& request) override {
    absl::MutexLock lock(&mu_);
    ++jobs_;
    last_session_ = request.session_id();
    last_source_ = request.source();
    v1::Job job;
    job.set_id("j-fake");
    job.set_kind(kind);
    job.set_session_id(request.session_id());
    job.mutable_result()->set_verdict(v1::VERDICT_PASSED);
    return job;
  }
  absl::StatusOr<v1::CompareRunsResponse> CompareRuns(
      const std::string& session_id, int turn_a, int turn_b) override {
    return absl::NotFoundError("no such turn");
  }

  std::string last_session() {
    absl::MutexLock lock(&mu_);
    return last_session_;
  }
  std::string last_source() {
    absl::MutexLock lock(&mu_);
    return last_source_;
  }
  int jobs() {
    absl::MutexLock lock(&mu_);
    return jobs_;
  }

 private:
  absl::Mutex mu_;
  std::string last_session_, last_source_;
  int jobs_ = 0;
};

TEST(HttpServerTest, ServesToolCallsThroughTheBackend) {
  FakeBackend backend;
  HttpServer server(Loopback(), &backend);
  absl::StatusOr<int> port = server.Start();
  ASSERT_TRUE(port.ok()) << port.status();
  ASSERT_GT(*port, 0);
  httplib::Client c("127.0.0.1", *port);

  httplib::Result res =
      c.Post("/v1/tools/compile_kernel", {{"X-Kbench-Session", "s-unit"}},
             R"({"kernel_code": "src"})", "application/json");
  json body = Parse(res);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(body["isError"], false);
  EXPECT_EQ(body["content"][0]["type"], "text");
  EXPECT_NE(body["content"][0]["text"].get<std::string>().find("VERDICT: "
                                                               "passed"),
            std::string::npos)
      << res->body;
  EXPECT_EQ(body["structuredContent"]["id"], "j-fake");
  EXPECT_EQ(body["structuredContent"]["kind"], "JOB_KIND_COMPILE");
  EXPECT_EQ(backend.last_session(), "s-unit");
  EXPECT_EQ(backend.last_source(), "src");

  // The session argument wins over the header.
  res =
      c.Post("/v1/tools/get_problem", {{"X-Kbench-Session", "s-header"}},
             R"({"session_id": "s-arg", "problem": "p1"})", "application/json");
  body = Parse(res);
  EXPECT_EQ(body["structuredContent"]["problem"]["name"], "p1");
  EXPECT_EQ(backend.last_session(), "s-arg");

  // A refused call is a 200 error result.
  res = c.Post("/v1/tools/get_gpu_specs", "", "application/json");
  body = Parse(res);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(body["isError"], true);
  EXPECT_EQ(body["structuredContent"]["error"]["code"], "UNAVAILABLE");
  EXPECT_NE(body["content"][0]["text"].get<std::string>().find("no GPU here"),
            std::string::npos);
  server.Stop();
}

TEST(HttpServerTest, MalformedAddressIsInvalidArgument) {
  FakeBackend backend;
  for (const char* listen : {"localhost", ":8080", "127.0.0.1:http",
                             "127.0.0.1:70000", "127.0.0.1:-1"}) {
    HttpServer::Options o = Loopback();
    o.listen = listen;
    HttpServer server(o, &backend);
    absl::StatusOr<int> port = server.Start();
    EXPECT_EQ(port.status().code(), absl::StatusCode::kInvalidArgument)
        << listen;
    EXPECT_NE(port.status().message().find("HOST:PORT"), std::string::npos)
        << port.status();
  }
}

TEST(HttpServerTest, BadLimitsOrAllowedNamesAreInvalidArgument) {
  FakeBackend backend;
  HttpServer::Options o = Loopback();
  o.max_threads = 100;  // < 256 + 128 + 16
  HttpServer tight(o, &backend);
  absl::Status st = tight.Start().status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(st.message(), "max_threads")) << st;

  o = Loopback();
  o.allowed_hosts = {"http://kb.example.com"};
  HttpServer bad_host(o, &backend);
  st = bad_host.Start().status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(st.message(), "--http-allowed-host")) << st;

  o = Loopback();
  o.allowed_origins = {"kb.example.com"};
  HttpServer bad_origin(o, &backend);
  EXPECT_EQ(bad_origin.Start().status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(HttpServerTest, PortInUseIsUnavailable) {
  FakeBackend backend;
  HttpServer first(Loopback(), &backend);
  absl::StatusOr<int> port = first.Start();
  ASSERT_TRUE(port.ok()) << port.status();
  HttpServer second(Loopback(*port), &backend);
  absl::StatusOr<int> again = second.Start();
  EXPECT_EQ(again.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(again.status().message().find("in use"), std::string::npos)
      << again.status();
  EXPECT_NE(again.status().message().find(absl::StrCat(":", *port)),
            std::string::npos)
      << again.status();

  // Once the first stops, the port can be bound again.
  first.Stop();
  HttpServer third(Loopback(*port), &backend);
  absl::StatusOr<int> reused = third.Start();
  ASSERT_TRUE(reused.ok()) << reused.status();
  EXPECT_EQ(*reused, *port);
}

TEST(HttpServerTest, StartTwiceAndStopTwice) {
  FakeBackend backend;
  HttpServer server(Loopback(), &backend);
  server.Stop();  // Before Start: nothing to do.
  EXPECT_EQ(server.stats().threads, 0);
  ASSERT_TRUE(server.Start().ok());
  EXPECT_EQ(server.Start().status().code(),
            absl::StatusCode::kFailedPrecondition);
  server.Stop();
  server.Stop();
  EXPECT_EQ(server.stats().threads, 0);
}

TEST(HttpServerTest, AnUnknownPathIsAJsonNotFound) {
  FakeBackend backend;
  HttpServer server(Loopback(), &backend);
  absl::StatusOr<int> port = server.Start();
  ASSERT_TRUE(port.ok()) << port.status();
  httplib::Client c("127.0.0.1", *port);
  httplib::Result res = c.Get("/nope");
  EXPECT_EQ(ErrorCode(res, 404), "NOT_FOUND");
  // compare_runs' NotFound is the tool's own result, not a 404.
  res = c.Post("/v1/tools/compare_runs", R"({"turn_a": 1, "turn_b": 2})",
               "application/json");
  json body = Parse(res);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(body["isError"], true);
}

TEST(HttpServerTest, HealthzAsksTheHealthCallback) {
  FakeBackend backend;
  std::atomic<bool> healthy{true};
  HttpServer::Options o = Loopback();
  o.health = [&healthy]() -> absl::Status {
    if (healthy) return absl::OkStatus();
    return absl::UnavailableError("the store cannot be written: disk full");
  };
  HttpServer server(o, &backend);
  absl::StatusOr<int> port = server.Start();
  ASSERT_TRUE(port.ok()) << port.status();
  httplib::Client c("127.0.0.1", *port);
  httplib::Result res = c.Get("/healthz");
  EXPECT_EQ(Parse(res), json({{"status", "ok"}}));
  healthy = false;
  res = c.Get("/healthz");
  json body = Parse(res);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(body["status"], "not_serving");
  EXPECT_EQ(body["reason"], "the store cannot be written: disk full");
  healthy = true;
  EXPECT_EQ(Parse(c.Get("/healthz"))["status"], "ok");
}

// Host, Origin and Content-Type are checked on every route, the routes of
// other front ends and unknown paths included, before anything runs.
TEST(HttpServerTest, TheGuardRunsOnEveryRouteBeforeTheHandler) {
  FakeBackend backend;
  HttpServer::Options o = Loopback();
  o.routes.push_back([](httplib::Server& s) {
    s.Get("/extra", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("{}", "application/json");
    });
  });
  HttpServer server(o, &backend);
  absl::StatusOr<int> port = server.Start();
  ASSERT_TRUE(port.ok()) << port.status();
  httplib::Client c("127.0.0.1", *port);
  const std::string args = R"({"kernel_code": "src"})";

  const httplib::Headers rebound = {
      {"Host", absl::StrCat("evil.example:", *port)}};
  EXPECT_EQ(ErrorCode(c.Get("/healthz", rebound), 421), "MISDIRECTED_REQUEST");
  EXPECT_EQ(ErrorCode(c.Get("/extra", rebound), 421), "MISDIRECTED_REQUEST");
  EXPECT_EQ(ErrorCode(c.Get("/nope", rebound), 421), "MISDIRECTED_REQUEST");
  httplib::Result res =
      c.Post("/v1/tools/compile_kernel", rebound, args, "application/json");
  EXPECT_EQ(ErrorCode(res, 421), "MISDIRECTED_REQUEST");
  EXPECT_TRUE(absl::StrContains(ErrorMessage(res), "--http-allowed-host"));

  const httplib::Headers foreign = {{"Origin", "http://evil.example"}};
  EXPECT_EQ(ErrorCode(c.Get("/extra", foreign), 403), "PERMISSION_DENIED");
  EXPECT_EQ(ErrorCode(c.Get("/v1/tools", foreign), 403), "PERMISSION_DENIED");
  EXPECT_EQ(ErrorCode(c.Post("/v1/tools/compile_kernel", foreign, args,
                             "application/json"),
                      403),
            "PERMISSION_DENIED");

  // The CSRF simple request.
  res = c.Post("/v1/tools/compile_kernel", args, "text/plain");
  EXPECT_EQ(ErrorCode(res, 415), "UNSUPPORTED_MEDIA_TYPE");
  EXPECT_TRUE(absl::StrContains(ErrorMessage(res),
                                "-H 'Content-Type: application/json'"));
  EXPECT_EQ(ErrorCode(c.Post("/v1/tools/compile_kernel", args,
                             "application/x-www-form-urlencoded"),
                      415),
            "UNSUPPORTED_MEDIA_TYPE");
  EXPECT_EQ(backend.jobs(), 0);

  // Same-origin and configured-port variants pass.
  const httplib::Headers same = {
      {"Origin", absl::StrCat("http://127.0.0.1:", *port)}};
  res = c.Post("/v1/tools/compile_kernel", same, args,
               "application/json; charset=utf-8");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(backend.jobs(), 1);
  res = c.Get("/extra", {{"Host", absl::StrCat("localhost:", *port)}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST(HttpServerTest, AConfiguredHostIsServed) {
  FakeBackend backend;
  HttpServer::Options o = Loopback();
  o.allowed_hosts = {"kb.example.com"};
  HttpServer server(o, &backend);
  absl::StatusOr<int> port = server.Start();
  ASSERT_TRUE(port.ok()) << port.status();
  httplib::Client c("127.0.0.1", *port);
  httplib::Result res = c.Get("/healthz", {{"Host", "kb.example.com"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(ErrorCode(c.Get("/healthz", {{"Host", "kb.example.org"}}), 421),
            "MISDIRECTED_REQUEST");
}

TEST(HttpServerTest, DeepOrHugeJsonIs400AndTheServerKeepsServing) {
  FakeBackend backend;
  HttpServer server(Loopback(), &backend);
  absl::StatusOr<int> port = server.Start();
  ASSERT_TRUE(port.ok()) << port.status();
  httplib::Client c("127.0.0.1", *port);
  // 120 KB of '[' under a known argument: the walk of the arguments used
  // to recurse once per level and overflow the stack.
  const std::string deep = "{\"tools\":" + std::string(120000, '[');
  httplib::Result res =
      c.Post("/v1/tools/sanitize_kernel", deep, "application/json");
  EXPECT_EQ(ErrorCode(res, 400), "INVALID_ARGUMENT");
  EXPECT_TRUE(absl::StrContains(ErrorMessage(res), "deep"))
      << ErrorMessage(res);
  // Balanced and valid, but past the limit.
  std::string balanced = "{\"tools\":";
  for (int i = 0; i < 40; ++i) balanced += "[";
  for (int i = 0; i < 40; ++i) balanced += "]";
  balanced += "}";
  res = c.Post("/v1/tools/sanitize_kernel", balanced, "application/json");
  EXPECT_EQ(ErrorCode(res, 400), "INVALID_ARGUMENT");
  EXPECT_TRUE(absl::StrContains(ErrorMessage(res), "32")) << ErrorMessage(res);
  EXPECT_EQ(backend.jobs(), 0);
  res = c.Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST(HttpServerTest, BadSessionIdsAre400) {
  FakeBackend backend;
  HttpServer server(Loopback(), &backend);
  absl::StatusOr<int> port = server.Start();
  ASSERT_TRUE(port.ok()) << port.status();
  httplib::Client c("127.0.0.1", *port);
  const std::string args = R"({"kernel_code": "src"})";
  for (const std::string& id :
       {std::string("\xff"), std::string(200, 'a'), std::string("a b"),
        std::string("s/../x"), std::string("s\tx")}) {
    httplib::Result res =
        c.Post("/v1/tools/compile_kernel", {{"X-Kbench-Session", id}}, args,
               "application/json");
    EXPECT_EQ(ErrorCode(res, 400), "INVALID_ARGUMENT") << id;
    EXPECT_TRUE(absl::StrContains(ErrorMessage(res), "X-Kbench-Session"))
        << ErrorMessage(res);
  }
  // A 1 MiB header is refused by the HTTP parser itself (also 400).
  EXPECT_EQ(ErrorCode(c.Post("/v1/tools/compile_kernel",
                             {{"X-Kbench-Session", std::string(1 << 20, 'a')}},
                             args, "application/json"),
                      400),
            "INVALID_ARGUMENT");
  // Two session headers.
  httplib::Headers two = {{"X-Kbench-Session", "s-a"},
                          {"X-Kbench-Session", "s-b"}};
  EXPECT_EQ(ErrorCode(c.Post("/v1/tools/compile_kernel", two, args,
                             "application/json"),
                      400),
            "INVALID_ARGUMENT");
  // In the arguments: a newline, bytes that are not UTF-8 (escaped in JSON).
  for (const std::string& body :
       {std::string(R"({"kernel_code": "s", "session_id": "a\nb"})"),
        std::string(R"({"kernel_code": "s", "session_id": "\u00ff"})"),
        json({{"kernel_code", "s"}, {"session_id", std::string(1 << 16, 'x')}})
            .dump()}) {
    httplib::Result res =
        c.Post("/v1/tools/compile_kernel", body, "application/json");
    EXPECT_EQ(ErrorCode(res, 400), "INVALID_ARGUMENT") << body.substr(0, 80);
    EXPECT_TRUE(absl::StrContains(ErrorMessage(res), "session_id"));
  }
  EXPECT_EQ(backend.jobs(), 0);
  EXPECT_EQ(Parse(c.Get("/healthz"))["status"], "ok");
}

}  // namespace
}  // namespace kbench
