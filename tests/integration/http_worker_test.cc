// HTTP tool calls that need a GPU worker, with kbworker running the stand-in
// runner (kb_fake_runner): a call waits for the worker's result, a session
// of HTTP calls can be compared, and stopping kbd ends a call still waiting.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "testing/process.h"

namespace kbench {
namespace {

using ::kbench::testing::BinDir;
using ::kbench::testing::Child;
using ::kbench::testing::KbdProcess;
using ::kbench::testing::ReadSourceFile;
using ::kbench::testing::StartWorker;
using nlohmann::json;

// The naive example with a marker comment the fake runner acts on.
std::string Kernel(const std::string& marker) {
  return ReadSourceFile("kernels/examples/gather_linear_naive.cu") + "\n// " +
         marker + "\n";
}

class HttpWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kbd = KbdProcess::Start({});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = std::move(*kbd);
    auto worker = StartWorker(kbd_->address(), BinDir() + "/kb_fake_runner");
    ASSERT_TRUE(worker.ok()) << worker.status();
    worker_ = std::move(*worker);
    // get_gpu_specs over HTTP answers once the worker is connected.
    for (int i = 0; i < 400; ++i) {
      json r = Call("get_gpu_specs", json::object());
      if (r["isError"] == false) {
        EXPECT_NE(Text(r).find("fake GPU"), std::string::npos) << Text(r);
        return;
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    FAIL() << "the worker did not connect; kbd log:\n" << kbd_->Log();
  }

  // POSTs a tool call; returns the 200 reply's JSON (null on failure).
  json Call(const std::string& tool, const json& args,
            const std::string& session = "") {
    const std::string& addr = kbd_->http_address();
    httplib::Client c("http://" + addr);
    c.set_read_timeout(120);
    httplib::Headers h;
    if (!session.empty()) h.emplace("X-Kbench-Session", session);
    httplib::Result res =
        c.Post("/v1/tools/" + tool, h, args.dump(), "application/json");
    EXPECT_TRUE(res) << httplib::to_string(res.error());
    if (!res) return json();
    EXPECT_EQ(res->status, 200) << res->body;
    return json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  }
  static std::string Text(const json& r) {
    if (!r.is_object() || !r["content"].is_array()) return "";
    return r["content"][0]["text"].get<std::string>();
  }

  std::unique_ptr<KbdProcess> kbd_;
  std::unique_ptr<Child> worker_;
};

TEST_F(HttpWorkerTest, GpuToolsWaitForTheWorkerAndCompare) {
  const std::string sid = "s-http-gpu";
  json check = Call("run_correctness",
                    {{"kernel_code", Kernel("FAKE_SLOW_MS=300")}}, sid);
  EXPECT_EQ(check["isError"], false) << check.dump();
  EXPECT_TRUE(absl::StartsWith(Text(check), "VERDICT: passed")) << Text(check);
  EXPECT_EQ(check["structuredContent"]["stage"], "STAGE_DONE");

  json submit = Call("submit_kernel", {{"kernel_code", Kernel("second")}}, sid);
  EXPECT_EQ(submit["isError"], false) << submit.dump();
  EXPECT_TRUE(absl::StartsWith(Text(submit), "VERDICT: passed"))
      << Text(submit);

  json failed = Call("run_correctness", {{"kernel_code", Kernel("FAKE_FAIL")}});
  EXPECT_EQ(failed["isError"], true) << failed.dump();
  EXPECT_TRUE(absl::StartsWith(Text(failed), "VERDICT: failed"))
      << Text(failed);

  json cmp = Call("compare_runs", {{"turn_a", 1}, {"turn_b", 2}}, sid);
  EXPECT_EQ(cmp["isError"], false) << cmp.dump();
  EXPECT_FALSE(Text(cmp).empty());
}

TEST_F(HttpWorkerTest, StoppingKbdEndsAWaitingCall) {
  json reply;
  std::thread call([&] {
    reply = Call("run_correctness",
                 {{"kernel_code", Kernel("FAKE_SLOW_MS=120000")}});
  });
  // Wait until its job runs on the worker.
  auto stub = v1::Kbench::NewStub(
      grpc::CreateChannel(kbd_->address(), grpc::InsecureChannelCredentials()));
  bool running = false;
  for (int i = 0; i < 600 && !running; ++i) {
    v1::ListJobsRequest req;
    req.set_stage(v1::STAGE_RUNNING);
    v1::ListJobsResponse resp;
    grpc::ClientContext ctx;
    running = stub->ListJobs(&ctx, req, &resp).ok() && resp.jobs_size() > 0 &&
              resp.jobs(0).stage() == v1::STAGE_RUNNING;
    if (!running) absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_TRUE(running) << kbd_->Log();
  // kbd exits by itself (0), not killed after the grace period.
  EXPECT_EQ(kbd_->Stop(), 0) << kbd_->Log();
  call.join();
  EXPECT_EQ(reply["isError"], true) << reply.dump();
  EXPECT_NE(Text(reply).find("shutting down"), std::string::npos)
      << reply.dump();
}

}  // namespace
}  // namespace kbench
