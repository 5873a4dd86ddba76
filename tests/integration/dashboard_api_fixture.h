// The fixture of the dashboard API tests (dashboard_api_test.cc,
// dashboard_errors_test.cc): one kbd process with a kbworker running the
// stand-in runner (kb_fake_runner) per test binary, and a session seeded
// over the HTTP tools (get_problem, compile_kernel, run_correctness,
// profile_kernel, submit_kernel), with helpers for GET and JSON errors.
//
// Ownership: the suite owns the server for its life. Thread safety:
// gtest's.
#ifndef KBENCH_TESTS_INTEGRATION_DASHBOARD_API_FIXTURE_H_
#define KBENCH_TESTS_INTEGRATION_DASHBOARD_API_FIXTURE_H_

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"
#include "testing/process.h"

namespace kbench {
namespace dashboard_test {

using ::kbench::testing::BinDir;
using ::kbench::testing::Child;
using ::kbench::testing::KbdProcess;
using ::kbench::testing::ReadSourceFile;
using ::kbench::testing::StartWorker;
using nlohmann::json;

inline constexpr char kSession[] = "s-dash";
inline constexpr char kWorker[] = "dash-w1";
inline constexpr char kHost[] = "dash-host";

inline std::string Naive() {
  return ReadSourceFile("kernels/examples/gather_linear_naive.cu");
}
// The submitted source: the naive kernel with one more line.
inline std::string Tuned() { return Naive() + "// tuned\n"; }

// Percent-encodes a query value.
inline std::string Encode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.') {
      out += static_cast<char>(c);
    } else {
      out += absl::StrCat("%", absl::Hex(c, absl::kZeroPad2));
    }
  }
  return out;
}

// A kbd with one fake-runner worker; `Seed` adds the session.
class Server {
 public:
  void Start() {
    auto kbd = KbdProcess::Start({});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = std::move(*kbd);
    ASSERT_FALSE(kbd_->http_address().empty()) << kbd_->Log();
    auto worker = StartWorker(kbd_->address(), BinDir() + "/kb_fake_runner", 0,
                              {"--worker-id", kWorker, "--host-id", kHost});
    ASSERT_TRUE(worker.ok()) << worker.status();
    worker_ = std::move(*worker);
    for (int i = 0; i < 400; ++i) {
      httplib::Result res = Client().Get("/api/workers");
      if (res && res->status == 200) {
        json body = json::parse(res->body, nullptr, false);
        if (body.is_object() && body["workers"].size() == 1) return;
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    FAIL() << "the worker did not connect; kbd log:\n" << kbd_->Log();
  }

  httplib::Client Client() const {
    httplib::Client c("http://" + kbd_->http_address());
    c.set_connection_timeout(10);
    c.set_read_timeout(120);
    return c;
  }

  // A tool call over HTTP; returns the 200 reply's JSON.
  json Call(const std::string& tool, const json& args,
            const std::string& session = "") const {
    httplib::Headers h;
    if (!session.empty()) h.emplace("X-Kbench-Session", session);
    httplib::Result res =
        Client().Post("/v1/tools/" + tool, h, args.dump(), "application/json");
    EXPECT_TRUE(res) << httplib::to_string(res.error());
    if (!res) return json();
    EXPECT_EQ(res->status, 200) << res->body;
    json body = json::parse(res->body, nullptr, false);
    EXPECT_EQ(body["isError"], false) << tool << ": " << res->body;
    return body;
  }

  // Turns 1..5 of kSession, plus a compile outside any session.
  void Seed() {
    Call("get_problem", json::object(), kSession);
    Call("compile_kernel", {{"kernel_code", Naive()}}, kSession);
    Call("run_correctness", {{"kernel_code", Naive()}}, kSession);
    Call("profile_kernel", {{"kernel_code", Naive()}}, kSession);
    Call("submit_kernel", {{"kernel_code", Tuned()}}, kSession);
    Call("compile_kernel", {{"kernel_code", Naive()}});
  }

  KbdProcess* kbd() { return kbd_.get(); }

 private:
  std::unique_ptr<KbdProcess> kbd_;
  std::unique_ptr<Child> worker_;
};

class DashboardApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new Server();
    server_->Start();
    if (!::testing::Test::HasFatalFailure()) server_->Seed();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(server_, nullptr);
    ASSERT_NE(server_->kbd(), nullptr);
  }

  static httplib::Result Get(const std::string& path) {
    return server_->Client().Get(path.c_str());
  }

  // A 200 application/json reply to GET `path`, parsed.
  static json GetJson(const std::string& path) {
    httplib::Result res = Get(path);
    EXPECT_TRUE(res) << path << ": " << httplib::to_string(res.error());
    if (!res) return json();
    EXPECT_EQ(res->status, 200) << path << ": " << res->body;
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
    json body = json::parse(res->body, nullptr, false);
    EXPECT_FALSE(body.is_discarded()) << res->body;
    return body;
  }

  // A JSON error with HTTP `status` and `code`; returns its message.
  static std::string ErrorOf(const httplib::Result& res, int status,
                             const std::string& code) {
    EXPECT_TRUE(res) << httplib::to_string(res.error());
    if (!res) return "";
    EXPECT_EQ(res->status, status) << res->body;
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
    json body = json::parse(res->body, nullptr, false);
    EXPECT_EQ(body["error"]["code"], code) << res->body;
    EXPECT_EQ(body["error"]["status"], status) << res->body;
    return body["error"]["message"].is_string()
               ? body["error"]["message"].get<std::string>()
               : "";
  }
  static std::string GetError(const std::string& path, int status,
                              const std::string& code) {
    return ErrorOf(Get(path), status, code);
  }

  inline static Server* server_ = nullptr;
};

}  // namespace dashboard_test
}  // namespace kbench

#endif  // KBENCH_TESTS_INTEGRATION_DASHBOARD_API_FIXTURE_H_
