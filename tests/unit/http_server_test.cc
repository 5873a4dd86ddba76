// HttpServer over a fake backend: start-up errors (bad address, port in
// use, started twice), stopping, and the translation of requests (session
// header, arguments) and results (MCP shape, refused calls).
#include "server/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "nlohmann/json.hpp"

namespace kbench {
namespace {

using nlohmann::json;

class FakeBackend : public AgentToolBackend {
 public:
  absl::StatusOr<v1::GetGpuSpecsResponse> GetGpuSpecs(
      const std::string& session_id) override {
    return absl::UnavailableError("no GPU here");
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

 private:
  absl::Mutex mu_;
  std::string last_session_, last_source_;
};

HttpServer::Options Loopback(int port = 0) {
  HttpServer::Options o;
  o.listen = absl::StrCat("127.0.0.1:", port);
  o.threads = 2;
  return o;
}

json Parse(const httplib::Result& res) {
  EXPECT_TRUE(res);
  if (!res) return json();
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  return json::parse(res->body, nullptr, /*allow_exceptions=*/false);
}

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
  ASSERT_TRUE(server.Start().ok());
  EXPECT_EQ(server.Start().status().code(),
            absl::StatusCode::kFailedPrecondition);
  server.Stop();
  server.Stop();
}

TEST(HttpServerTest, AnUnknownPathIsAJsonNotFound) {
  FakeBackend backend;
  HttpServer server(Loopback(), &backend);
  absl::StatusOr<int> port = server.Start();
  ASSERT_TRUE(port.ok()) << port.status();
  httplib::Client c("127.0.0.1", *port);
  httplib::Result res = c.Get("/nope");
  json body = Parse(res);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(body["error"]["code"], "NOT_FOUND");
  // compare_runs' NotFound is the tool's own result, not a 404.
  res = c.Post("/v1/tools/compare_runs", R"({"turn_a": 1, "turn_b": 2})",
               "application/json");
  body = Parse(res);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(body["isError"], true);
}

}  // namespace
}  // namespace kbench
