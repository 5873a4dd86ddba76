// The connections, threads and limits behind HttpServer, end to end
// (server/http/http_connection_server.h, server/http/http_task_queue.h,
// server/http/http_call_limiter.h): calls past the limits get 429; a client
// that hangs up cancels its call; a refused body cannot smuggle a request;
// pipelined requests are answered; idle and slowloris connections are closed
// in time and cannot starve cheap requests, while the pool grows past
// httplib's 8 threads for them. The pool and the limiter alone are in
// http_task_queue_test.cc and http_call_limiter_test.cc.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"
#include "server/http/http_fixtures.h"
#include "server/http/http_server.h"
#include "testing/raw_connection.h"

namespace kbench {
namespace {

using http_fixtures::ErrorCode;
using http_fixtures::ErrorMessage;
using http_fixtures::Loopback;
using http_fixtures::Parse;
using ::kbench::testing::RawConnection;
using nlohmann::json;

// GPU jobs wait until released or until their client hangs up; compiles
// answer at once.
class BlockingBackend : public CancellableToolBackend {
 public:
  absl::StatusOr<v1::GetGpuSpecsResponse> GetGpuSpecs(
      const std::string&) override {
    return v1::GetGpuSpecsResponse();
  }
  absl::StatusOr<v1::GetProblemResponse> GetProblem(
      const std::string&, const std::string&) override {
    return v1::GetProblemResponse();
  }
  absl::StatusOr<v1::ListProblemsResponse> ListProblems(
      const std::string&) override {
    return v1::ListProblemsResponse();
  }
  absl::StatusOr<v1::CompareRunsResponse> CompareRuns(const std::string&, int,
                                                      int) override {
    return v1::CompareRunsResponse();
  }
  absl::StatusOr<v1::Job> RunJob(v1::JobKind kind,
                                 const v1::KernelRequest& request) override {
    return RunJobUntil(kind, request, nullptr);
  }
  absl::StatusOr<v1::Job> RunJobUntil(
      v1::JobKind kind, const v1::KernelRequest& request,
      const std::function<bool()>& cancelled) override {
    calls_.fetch_add(1);
    v1::Job job;
    job.set_id("j-block");
    job.set_kind(kind);
    job.mutable_result()->set_verdict(v1::VERDICT_PASSED);
    if (kind == v1::JOB_KIND_COMPILE) return job;
    waiting_.fetch_add(1);
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (!release_.HasBeenNotified() && absl::Now() < deadline) {
      if (cancelled && cancelled()) {
        waiting_.fetch_sub(1);
        cancelled_.fetch_add(1);
        return absl::CancelledError("client gone");
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    waiting_.fetch_sub(1);
    return job;
  }

  void Release() { release_.Notify(); }
  int waiting() const { return waiting_.load(); }
  int cancelled() const { return cancelled_.load(); }
  int calls() const { return calls_.load(); }
  // Waits until `n` GPU calls wait (true) or 10 s pass.
  bool WaitForWaiting(int n) const {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (waiting_.load() < n && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(2));
    }
    return waiting_.load() >= n;
  }

 private:
  absl::Notification release_;
  std::atomic<int> waiting_{0};
  std::atomic<int> cancelled_{0};
  std::atomic<int> calls_{0};
};

TEST(HttpServerTest, CallsPastTheLimitsAre429WithRetryAfter) {
  BlockingBackend backend;
  HttpServer::Options o = Loopback();
  o.max_threads = 64;
  o.max_gpu_calls = 2;
  o.max_compile_calls = 8;
  o.max_calls_per_session = 1;
  HttpServer server(o, &backend);
  absl::StatusOr<int> port = server.Start();
  ASSERT_TRUE(port.ok()) << port.status();
  const std::string gpu_args = R"({"kernel_code": "src"})";

  std::vector<std::thread> held;
  for (const char* session : {"s-1", "s-2"}) {
    held.emplace_back([&, session] {
      httplib::Client c("127.0.0.1", *port);
      c.set_read_timeout(30);
      httplib::Result res =
          c.Post("/v1/tools/run_correctness", {{"X-Kbench-Session", session}},
                 gpu_args, "application/json");
      EXPECT_TRUE(res && res->status == 200);
    });
  }
  ASSERT_TRUE(backend.WaitForWaiting(2));
  EXPECT_EQ(server.stats().gpu_calls, 2);

  httplib::Client c("127.0.0.1", *port);
  httplib::Result res =
      c.Post("/v1/tools/submit_kernel", gpu_args, "application/json");
  EXPECT_EQ(ErrorCode(res, 429), "RESOURCE_EXHAUSTED");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value("Retry-After"), "2");
  EXPECT_TRUE(absl::StrContains(ErrorMessage(res), "GPU tool calls"))
      << ErrorMessage(res);
  // Compiles have their own bound, and cheap calls no bound.
  res = c.Post("/v1/tools/compile_kernel", gpu_args, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(Parse(c.Get("/healthz"))["status"], "ok");
  // The per-session bound, for a compile of a session with a GPU call.
  res = c.Post("/v1/tools/compile_kernel", {{"X-Kbench-Session", "s-1"}},
               gpu_args, "application/json");
  EXPECT_EQ(ErrorCode(res, 429), "RESOURCE_EXHAUSTED");
  EXPECT_TRUE(absl::StrContains(ErrorMessage(res), "session s-1"))
      << ErrorMessage(res);

  backend.Release();
  for (std::thread& t : held) t.join();
  EXPECT_EQ(server.stats().gpu_calls, 0);
  res = c.Post("/v1/tools/run_correctness", {{"X-Kbench-Session", "s-1"}},
               gpu_args, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
}

std::string ToolRequest(int port, const std::string& tool,
                        const std::string& body) {
  return absl::StrCat(
      "POST /v1/tools/", tool, " HTTP/1.1\r\nHost: 127.0.0.1:", port,
      "\r\nContent-Type: application/json\r\nContent-Length: ", body.size(),
      "\r\n\r\n", body);
}

TEST(HttpServerTest, AClientThatHangsUpCancelsItsCall) {
  BlockingBackend backend;
  HttpServer server(Loopback(), &backend);
  absl::StatusOr<int> port = server.Start();
  ASSERT_TRUE(port.ok()) << port.status();

  RawConnection stays(*port);
  EXPECT_TRUE(stays.ok()) << stays.status();
  ASSERT_TRUE(stays.Send(
      ToolRequest(*port, "run_correctness", R"({"kernel_code": "a"})")));
  RawConnection leaves(*port);
  EXPECT_TRUE(leaves.ok()) << leaves.status();
  ASSERT_TRUE(leaves.Send(
      ToolRequest(*port, "run_correctness", R"({"kernel_code": "b"})")));
  ASSERT_TRUE(backend.WaitForWaiting(2));
  leaves.Close();
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (backend.cancelled() < 1 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(backend.cancelled(), 1);
  // The connected client is not taken for gone.
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_EQ(backend.cancelled(), 1);
  EXPECT_EQ(backend.waiting(), 1);
  backend.Release();
  const std::string reply = stays.ReadResponse(absl::Seconds(10));
  EXPECT_TRUE(absl::StartsWith(reply, "HTTP/1.1 200")) << reply;
}

// An error reply closes the connection, so the unread body of a refused
// request is never parsed as a request of its own.
TEST(HttpServerTest, ARefusedBodyCannotSmuggleARequest) {
  BlockingBackend backend;
  HttpServer server(Loopback(), &backend);
  absl::StatusOr<int> port = server.Start();
  ASSERT_TRUE(port.ok()) << port.status();
  const std::string smuggled =
      ToolRequest(*port, "compile_kernel", R"({"kernel_code": "x"})");
  RawConnection conn(*port);
  EXPECT_TRUE(conn.ok()) << conn.status();
  ASSERT_TRUE(conn.Send(absl::StrCat(
      "POST /v1/tools/compile_kernel HTTP/1.1\r\nHost: 127.0.0.1:", *port,
      "\r\nContent-Type: text/plain\r\nContent-Length: ", smuggled.size(),
      "\r\n\r\n", smuggled)));
  const std::string all = conn.ReadAll(absl::Seconds(5));
  EXPECT_TRUE(absl::StartsWith(all, "HTTP/1.1 415")) << all;
  EXPECT_TRUE(absl::StrContains(all, "Connection: close")) << all;
  EXPECT_EQ(all.find("HTTP/1.1", 1), std::string::npos) << all;
  EXPECT_EQ(backend.calls(), 0);
}

TEST(HttpServerTest, PipelinedRequestsAreAllAnswered) {
  BlockingBackend backend;
  HttpServer server(Loopback(), &backend);
  absl::StatusOr<int> port = server.Start();
  ASSERT_TRUE(port.ok()) << port.status();
  const std::string get = absl::StrCat(
      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:", *port, "\r\n\r\n");
  RawConnection conn(*port);
  EXPECT_TRUE(conn.ok()) << conn.status();
  ASSERT_TRUE(
      conn.Send(get + get +
                absl::StrCat("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:", *port,
                             "\r\nConnection: close\r\n\r\n")));
  const std::string all = conn.ReadAll(absl::Seconds(5));
  size_t n = 0;
  for (size_t at = all.find("HTTP/1.1 200"); at != std::string::npos;
       at = all.find("HTTP/1.1 200", at + 1)) {
    ++n;
  }
  EXPECT_EQ(n, 3u) << all;
}

// Idle and trickling (slowloris) connections are closed within the
// keep-alive and request timeouts, and while they are open cheap requests
// still answer at once.
TEST(HttpServerTest, SlowAndIdleConnectionsCannotPinThreads) {
  BlockingBackend backend;
  HttpServer::Options o = Loopback();
  o.keep_alive = absl::Milliseconds(300);
  o.request_timeout = absl::Seconds(1);
  HttpServer server(o, &backend);
  absl::StatusOr<int> port = server.Start();
  ASSERT_TRUE(port.ok()) << port.status();

  std::vector<std::unique_ptr<RawConnection>> idle, slow;
  for (int i = 0; i < 20; ++i) {
    idle.push_back(std::make_unique<RawConnection>(*port));
    EXPECT_TRUE(idle.back()->ok()) << idle.back()->status();
    slow.push_back(std::make_unique<RawConnection>(*port));
    EXPECT_TRUE(slow.back()->ok()) << slow.back()->status();
  }
  const std::string head = absl::StrCat(
      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:", *port, "\r\nX-Slow: ");
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    for (size_t i = 0; !stop && i < head.size() + 100; ++i) {
      const char c = i < head.size() ? head[i] : 'a';
      for (auto& s : slow) s->Send(std::string(1, c));
      absl::SleepFor(absl::Milliseconds(100));
    }
  });
  const absl::Time t0 = absl::Now();
  httplib::Client c("127.0.0.1", *port);
  absl::Duration worst;
  for (int i = 0; i < 50; ++i) {
    const absl::Time s = absl::Now();
    httplib::Result res = c.Get("/healthz");
    worst = std::max(worst, absl::Now() - s);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
    absl::SleepFor(absl::Milliseconds(10));
  }
  // A pinned pool would hold a request until the idle connections close
  // (keep_alive, 300 ms); 200 ms keeps that apart from the ~100 ms a
  // sanitizer build under load can take to grow the pool.
  EXPECT_LT(worst, absl::Milliseconds(200));
  for (auto& conn : idle) {
    EXPECT_TRUE(conn->WaitClosed(t0 + absl::Seconds(3))) << "idle";
  }
  for (auto& conn : slow) {
    EXPECT_TRUE(conn->WaitClosed(t0 + absl::Seconds(4))) << "slowloris";
  }
  EXPECT_LT(absl::Now() - t0, absl::Seconds(4));
  stop = true;
  trickle.join();
  // The pool grew past httplib's 8 threads for them.
  EXPECT_GE(server.stats().peak_threads, 40);
}

}  // namespace
}  // namespace kbench
