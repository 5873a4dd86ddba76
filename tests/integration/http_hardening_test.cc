// kbd's HTTP port against what a hostile web page or client does, on
// loopback with a real kbd (and, for GPU calls, a kbworker with the
// stand-in runner kb_fake_runner): a DNS-rebound Host (421), a foreign
// Origin (403), the CSRF simple request (text/plain: 415, no job), JSON
// nested 60,000 deep (400, kbd keeps serving), session ids that would
// poison the store (400), a client that hangs up mid-call (its job ends
// CANCELLED), and the load of issue 13's acceptance: 64 clients holding GPU
// calls against a slow runner plus 8 slow connections, while cached
// compiles answer p99 <= 100 ms and /healthz <= 50 ms.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"
#include "testing/process.h"
#include "testing/raw_connection.h"

namespace kbench {
namespace {

using ::kbench::testing::BinDir;
using ::kbench::testing::Child;
using ::kbench::testing::KbdProcess;
using ::kbench::testing::RawConnection;
using ::kbench::testing::ReadSourceFile;
using nlohmann::json;

// The naive example with a marker comment the fake runner acts on.
std::string Kernel(const std::string& marker) {
  return ReadSourceFile("kernels/examples/gather_linear_naive.cu") + "\n// " +
         marker + "\n";
}

// The q-quantile (nearest rank) of `v`.
double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank =
      static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

class HttpHardeningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KbdProcess::Options options;
    options.extra_args = {"--lease-ttl-ms=3000"};
    auto kbd = KbdProcess::Start(options);
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = std::move(*kbd);
    const std::string& addr = kbd_->http_address();
    ASSERT_FALSE(addr.empty()) << kbd_->Log();
    ASSERT_TRUE(absl::SimpleAtoi(addr.substr(addr.rfind(':') + 1), &port_));
  }

  std::unique_ptr<httplib::Client> Client() {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_connection_timeout(10);
    c->set_read_timeout(60);
    return c;
  }
  std::string Host() const { return absl::StrCat("127.0.0.1:", port_); }

  // A raw tool call: method line, Host, then `headers` (each ending in
  // \r\n), then the JSON body.
  std::string ToolRequest(const std::string& tool, const std::string& body,
                          const std::string& headers = "",
                          const std::string& type = "application/json") {
    return absl::StrCat("POST /v1/tools/", tool, " HTTP/1.1\r\nHost: ", Host(),
                        "\r\nContent-Type: ", type, "\r\n", headers,
                        "Content-Length: ", body.size(), "\r\n\r\n", body);
  }
  // Sends `request` on a fresh connection; returns the status code of the
  // reply (0 when none came).
  int RawStatus(const std::string& request, std::string* reply = nullptr) {
    RawConnection c(port_);
    EXPECT_TRUE(c.ok());
    EXPECT_TRUE(c.Send(request));
    const std::string all = c.ReadAll(absl::Seconds(10));
    if (reply != nullptr) *reply = all;
    int status = 0;
    if (absl::StartsWith(all, "HTTP/1.1 ")) {
      (void)absl::SimpleAtoi(all.substr(9, 3), &status);
    }
    return status;
  }

  json GetJson(const std::string& path, int want = 200) {
    httplib::Result res = Client()->Get(path.c_str());
    EXPECT_TRUE(res) << path;
    if (!res) return json();
    EXPECT_EQ(res->status, want) << path << ": " << res->body;
    return json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  }
  // The jobs of `session` (at most 200), as the dashboard API lists them.
  json Jobs(const std::string& query) {
    json j = GetJson("/api/jobs?page_size=200&" + query);
    return j.contains("jobs") ? j["jobs"] : json::array();
  }
  int CountStage(const std::string& stage) {
    return static_cast<int>(Jobs("stage=" + stage).size());
  }

  void StartFakeWorker() {
    auto w = testing::StartWorker(kbd_->address(), BinDir() + "/kb_fake_runner",
                                  0, {"--worker-id", "w-http"});
    ASSERT_TRUE(w.ok()) << w.status();
    worker_ = std::move(*w);
    for (int i = 0; i < 400; ++i) {
      json w = GetJson("/api/workers");
      if (w["workers"].size() >= 1) return;
      absl::SleepFor(absl::Milliseconds(25));
    }
    FAIL() << "the fake worker did not connect; kbd log:\n" << kbd_->Log();
  }

  // kbd is alive and answers (the tool list: /healthz also depends on the
  // store's and the sandbox's health, which the acceptance test checks).
  void ExpectServing() {
    EXPECT_TRUE(kbd_->child()->Running()) << kbd_->Log();
    httplib::Result res = Client()->Get("/v1/tools");
    ASSERT_TRUE(res) << kbd_->Log();
    EXPECT_EQ(res->status, 200) << res->body;
  }

  std::unique_ptr<KbdProcess> kbd_;
  std::unique_ptr<Child> worker_;
  int port_ = 0;
};

TEST_F(HttpHardeningTest, AForeignHostIs421OnEveryRoute) {
  const std::string rebound = absl::StrCat("evil.example:", port_);
  for (const char* path :
       {"/healthz", "/api/jobs", "/api/sessions", "/metrics", "/", "/nope"}) {
    std::string reply;
    EXPECT_EQ(RawStatus(absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: ",
                                     rebound, "\r\n\r\n"),
                        &reply),
              421)
        << path << "\n"
        << reply;
    EXPECT_TRUE(absl::StrContains(reply, "--http-allowed-host")) << reply;
  }
  // A tool call through a rebound name creates nothing.
  std::string call =
      ToolRequest("compile_kernel", json({{"kernel_code", Kernel("x")}}).dump(),
                  "X-Kbench-Session: s-rebound\r\n");
  call.replace(call.find(Host()), Host().size(), rebound);
  EXPECT_EQ(RawStatus(call), 421);
  EXPECT_TRUE(Jobs("session=s-rebound").empty());
  // No Host at all on HTTP/1.1.
  EXPECT_EQ(RawStatus("GET /api/jobs HTTP/1.1\r\n\r\n"), 400);
  // The loopback names pass.
  for (const std::string& host : {Host(), absl::StrCat("localhost:", port_),
                                  absl::StrCat("[::1]:", port_)}) {
    EXPECT_EQ(RawStatus(absl::StrCat("GET /v1/tools HTTP/1.1\r\nHost: ", host,
                                     "\r\nConnection: close\r\n\r\n")),
              200)
        << host;
  }
  ExpectServing();
}

TEST_F(HttpHardeningTest, AForeignOriginIs403OnEveryMethod) {
  const httplib::Headers evil = {{"Origin", "http://evil.example"}};
  httplib::Result res = Client()->Get("/api/jobs", evil);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403) << res->body;
  EXPECT_TRUE(absl::StrContains(res->body, "--http-allowed-origin"));
  res = Client()->Get("/api/sessions", {{"Origin", "null"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
  // A cross-site <img>/<script> load sends no Origin but is marked.
  res = Client()->Get("/api/jobs", {{"Sec-Fetch-Site", "cross-site"},
                                    {"Sec-Fetch-Mode", "no-cors"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
  // A cross-origin JSON POST (it would be preflighted, and fail; a page can
  // still send it with mode no-cors and text/plain: see the 415 test).
  const std::string args = json({{"kernel_code", Kernel("x")}}).dump();
  httplib::Headers evil_call = evil;
  evil_call.emplace("X-Kbench-Session", "s-origin");
  res = Client()->Post("/v1/tools/compile_kernel", evil_call, args,
                       "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
  EXPECT_TRUE(Jobs("session=s-origin").empty());
  // The dashboard's own page: same origin.
  httplib::Headers same = {{"Origin", "http://" + Host()},
                           {"X-Kbench-Session", "s-origin"}};
  res = Client()->Post("/v1/tools/compile_kernel", same, args,
                       "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(Jobs("session=s-origin").size(), 1u);
}

TEST_F(HttpHardeningTest, ASimpleRequestPostIs415AndCreatesNoJob) {
  // What a form or fetch(mode: 'no-cors') on any page can send without a
  // preflight.
  const std::string args = json({{"kernel_code", Kernel("x")}}).dump();
  for (const char* type : {"text/plain", "text/plain;charset=UTF-8",
                           "application/x-www-form-urlencoded",
                           "multipart/form-data; boundary=b"}) {
    std::string reply;
    EXPECT_EQ(RawStatus(ToolRequest("submit_kernel", args,
                                    "X-Kbench-Session: s-csrf\r\n", type),
                        &reply),
              415)
        << type;
    EXPECT_TRUE(absl::StrContains(reply, "-H 'Content-Type: application/json'"))
        << reply;
  }
  EXPECT_TRUE(Jobs("session=s-csrf").empty());
  GetJson("/api/sessions/s-csrf", 404);
  ExpectServing();
}

TEST_F(HttpHardeningTest, DeepJsonIs400AndKbdKeepsServing) {
  // 120 KB, the body that crashed kbd (SIGSEGV in the argument walk).
  const std::string deep = "{\"tools\":" + std::string(120000, '[');
  std::string reply;
  EXPECT_EQ(RawStatus(ToolRequest("sanitize_kernel", deep), &reply), 400);
  EXPECT_TRUE(absl::StrContains(reply, "deep")) << reply.substr(0, 500);
  EXPECT_EQ(RawStatus(ToolRequest("sanitize_kernel", deep, "", "text/plain")),
            415);
  // Deep inside a valid object, and deep objects.
  std::string objects = "{\"tools\":";
  for (int i = 0; i < 60000; ++i) objects += "{\"a\":";
  EXPECT_EQ(RawStatus(ToolRequest("compile_kernel", objects)), 400);
  ExpectServing();
  httplib::Result res = Client()->Post(
      "/v1/tools/compile_kernel",
      json({{"kernel_code", Kernel("after deep")}}).dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
}

TEST_F(HttpHardeningTest, BadSessionIdsAre400AndTheStoreStaysReadable) {
  const std::string args = json({{"kernel_code", Kernel("x")}}).dump();
  std::string reply;
  EXPECT_EQ(RawStatus(ToolRequest("compile_kernel", args,
                                  "X-Kbench-Session: \xff\r\n"),
                      &reply),
            400);
  EXPECT_TRUE(absl::StrContains(reply, "X-Kbench-Session")) << reply;
  EXPECT_EQ(RawStatus(ToolRequest(
                "compile_kernel", args,
                absl::StrCat("X-Kbench-Session: ", std::string(1 << 20, 's'),
                             "\r\n"))),
            400);
  EXPECT_EQ(RawStatus(ToolRequest("compile_kernel", args,
                                  "X-Kbench-Session: s-a\rb\r\n")),
            400);
  for (const std::string& id :
       {std::string("a\nb"), std::string(1 << 16, 's'), std::string("\x01")}) {
    EXPECT_EQ(RawStatus(ToolRequest(
                  "compile_kernel",
                  json({{"kernel_code", "x"}, {"session_id", id}}).dump())),
              400);
  }
  // Nothing unreadable was stored: the job and session lists still load.
  json jobs = GetJson("/api/jobs?page_size=200");
  EXPECT_TRUE(jobs["jobs"].empty()) << jobs.dump().substr(0, 500);
  GetJson("/api/sessions");
  ExpectServing();
}

TEST_F(HttpHardeningTest, AClientThatHangsUpCancelsItsJob) {
  StartFakeWorker();
  RawConnection call(port_);
  ASSERT_TRUE(call.ok());
  ASSERT_TRUE(call.Send(ToolRequest(
      "run_correctness", json({{"kernel_code", Kernel("FAKE_HANG")}}).dump(),
      "X-Kbench-Session: s-hangup\r\n")));
  std::string id;
  const absl::Time start = absl::Now();
  while (absl::Now() - start < absl::Seconds(20)) {
    json jobs = Jobs("session=s-hangup&stage=running");
    if (!jobs.empty()) {
      id = jobs[0]["id"];
      break;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_FALSE(id.empty()) << "the job never ran; kbd log:\n" << kbd_->Log();
  EXPECT_FALSE(call.HasReply());
  call.Close();
  const absl::Time closed = absl::Now();
  json job;
  while (absl::Now() - closed < absl::Seconds(10)) {
    job = GetJson("/api/jobs/" + id)["job"];
    if (job["stage"] == "STAGE_DONE") break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(job["stage"], "STAGE_DONE") << job.dump();
  EXPECT_EQ(job["result"]["verdict"], "VERDICT_CANCELLED") << job.dump();
  EXPECT_LT(absl::Now() - closed, absl::Seconds(3));
  ExpectServing();
}

// Issue 13's acceptance, bounded: 64 GPU calls held against a slow runner,
// 8 slowloris connections, then cached compiles and /healthz timed.
TEST_F(HttpHardeningTest, CompilesAndHealthStayFastUnderHeldGpuCalls) {
  StartFakeWorker();
  const std::string slow = Kernel("FAKE_SLOW_MS=60000");
  // Compiled once first, so that the held calls wait for the GPU only.
  httplib::Result warm =
      Client()->Post("/v1/tools/compile_kernel",
                     json({{"kernel_code", slow}}).dump(), "application/json");
  ASSERT_TRUE(warm);
  ASSERT_EQ(warm->status, 200) << warm->body;

  constexpr int kHeld = 64;
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < kHeld; ++i) {
    held.push_back(std::make_unique<RawConnection>(port_));
    ASSERT_TRUE(held.back()->ok());
    ASSERT_TRUE(held.back()->Send(
        ToolRequest("run_correctness", json({{"kernel_code", slow}}).dump(),
                    absl::StrCat("X-Kbench-Session: s-load-", i, "\r\n"))));
  }
  // Eight slowloris connections: a header byte every 200 ms, reconnecting
  // whenever kbd drops them.
  std::atomic<bool> stop{false};
  std::atomic<int> slow_reconnects{0};
  std::thread slowloris([&] {
    const std::string head =
        absl::StrCat("GET /healthz HTTP/1.1\r\nHost: ", Host(), "\r\nX-Slow: ");
    std::vector<std::unique_ptr<RawConnection>> conns(8);
    std::vector<size_t> sent(8, 0);
    while (!stop) {
      for (size_t i = 0; i < conns.size(); ++i) {
        if (conns[i] == nullptr || conns[i]->HasReply()) {
          if (conns[i] != nullptr) slow_reconnects.fetch_add(1);
          conns[i] = std::make_unique<RawConnection>(port_);
          sent[i] = 0;
        }
        const char c = sent[i] < head.size() ? head[sent[i]] : 'a';
        conns[i]->Send(std::string(1, c));
        ++sent[i];
      }
      absl::SleepFor(absl::Milliseconds(200));
    }
  });
  struct Joiner {
    std::atomic<bool>& stop;
    std::thread& thread;
    ~Joiner() {
      stop = true;
      if (thread.joinable()) thread.join();
    }
  } joiner{stop, slowloris};

  // All 64 held: one running on the fake GPU, the rest waiting for it.
  const absl::Time start = absl::Now();
  int pending = 0;
  while (absl::Now() - start < absl::Seconds(20)) {
    pending = CountStage("waiting_gpu") + CountStage("running");
    if (pending >= kHeld) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_EQ(pending, kHeld) << kbd_->Log();

  // Cached compiles and /healthz, interleaved, on one keep-alive client.
  const std::string cached =
      json({{"kernel_code",
             ReadSourceFile("kernels/examples/gather_linear_naive.cu")}})
          .dump();
  std::unique_ptr<httplib::Client> c = Client();
  httplib::Result first =
      c->Post("/v1/tools/compile_kernel", cached, "application/json");
  ASSERT_TRUE(first);
  ASSERT_EQ(first->status, 200) << first->body;
  std::vector<double> compile_ms, health_ms;
  for (int i = 0; i < 100; ++i) {
    absl::Time t = absl::Now();
    httplib::Result res =
        c->Post("/v1/tools/compile_kernel", cached, "application/json");
    compile_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t));
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    EXPECT_TRUE(absl::StrContains(res->body, "VERDICT_PASSED"));
    t = absl::Now();
    res = c->Get("/healthz");
    health_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t));
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << res->body;
  }
  const double compile_p99 = Percentile(compile_ms, 0.99);
  const double health_p99 = Percentile(health_ms, 0.99);
  std::printf(
      "cached compile over HTTP: p50 %.1f ms, p99 %.1f ms, max %.1f ms; "
      "/healthz p50 %.1f ms, p99 %.1f ms, max %.1f ms; slow reconnects %d\n",
      Percentile(compile_ms, 0.5), compile_p99,
      *std::max_element(compile_ms.begin(), compile_ms.end()),
      Percentile(health_ms, 0.5), health_p99,
      *std::max_element(health_ms.begin(), health_ms.end()),
      slow_reconnects.load());
  EXPECT_LE(compile_p99, 100.0);
  EXPECT_LE(health_p99, 50.0);
  // The held calls are still held (none was refused or dropped).
  int answered = 0;
  for (auto& h : held) answered += h->HasReply() ? 1 : 0;
  // (The one on the fake GPU may pass its 10 s budget and end.)
  EXPECT_LE(answered, 3) << "held GPU calls were answered early";

  // Hanging up ends them all: every job is cancelled.
  held.clear();
  const absl::Time closed = absl::Now();
  while (absl::Now() - closed < absl::Seconds(15)) {
    pending = CountStage("waiting_gpu") + CountStage("running") +
              CountStage("compiling") + CountStage("queued");
    if (pending == 0) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_EQ(pending, 0);
  int cancelled = 0;
  for (int i = 0; i < kHeld; ++i) {
    for (const json& j : Jobs(absl::StrCat("session=s-load-", i))) {
      cancelled += j["result"]["verdict"] == "VERDICT_CANCELLED" ? 1 : 0;
    }
  }
  EXPECT_GE(cancelled, kHeld - 3);
  ExpectServing();
}

TEST(HttpAllowedHostFlagTest, ConfiguredNamesAreServedAndBadOnesStopStartup) {
  KbdProcess::Options options;
  options.extra_args = {"--http-allowed-host",   "kb.example.com",
                        "--http-allowed-host",   "lan-box:9000",
                        "--http-allowed-origin", "https://dash.example.com"};
  auto kbd = KbdProcess::Start(options);
  ASSERT_TRUE(kbd.ok()) << kbd.status();
  httplib::Client c("http://" + (*kbd)->http_address());
  for (const char* host : {"kb.example.com", "kb.example.com:443"}) {
    httplib::Result res = c.Get("/v1/tools", {{"Host", host}});
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << host;
  }
  httplib::Result res = c.Get("/v1/tools", {{"Host", "lan-box:9001"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 421);
  res = c.Get("/v1/tools", {{"Origin", "https://dash.example.com"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  res = c.Get("/v1/tools", {{"Origin", "https://other.example.com"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);

  testing::TempDir dir;
  testing::CommandResult bad = testing::RunCommand(
      {BinDir() + "/kbd", "--listen", "127.0.0.1:0", "--data-dir",
       dir.path() + "/data", "--http-listen", "127.0.0.1:0",
       "--http-allowed-host", "http://kb.example.com"},
      {}, absl::Seconds(60));
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_TRUE(absl::StrContains(bad.err, "--http-allowed-host")) << bad.err;
}

}  // namespace
}  // namespace kbench
