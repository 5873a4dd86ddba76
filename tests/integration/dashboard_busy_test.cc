// The dashboard's view of a worker while it runs a job, with real HTTP
// against a kbd process and a kbworker whose stand-in runner
// (kb_fake_runner) holds the job for 3 s: the worker shows busy with its
// job in /api/workers, the job shows in /api/jobs?stage=running and in the
// kbench_jobs gauge, and the worker's figures after it ends.
#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"
#include "testing/process.h"

namespace kbench {
namespace {

using ::kbench::testing::BinDir;
using ::kbench::testing::KbdProcess;
using ::kbench::testing::ReadSourceFile;
using ::kbench::testing::StartWorker;
using nlohmann::json;

constexpr char kWorker[] = "dash-busy-w1";

// The sample lines of a Prometheus text, by "name{labels}".
std::map<std::string, double> Samples(const std::string& text) {
  std::map<std::string, double> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "#")) continue;
    const size_t space = line.rfind(' ');
    if (space == absl::string_view::npos) continue;
    out[std::string(line.substr(0, space))] =
        std::strtod(std::string(line.substr(space + 1)).c_str(), nullptr);
  }
  return out;
}

TEST(DashboardBusyTest, ARunningJobShowsOnItsWorkerAndInTheGauges) {
  auto kbd = KbdProcess::Start({});
  ASSERT_TRUE(kbd.ok()) << kbd.status();
  auto worker_process =
      StartWorker((*kbd)->address(), BinDir() + "/kb_fake_runner", 0,
                  {"--worker-id", kWorker});
  ASSERT_TRUE(worker_process.ok()) << worker_process.status();
  httplib::Client c("http://" + (*kbd)->http_address());
  c.set_read_timeout(120);
  bool connected = false;
  for (int i = 0; i < 400 && !connected; ++i) {
    httplib::Result res = c.Get("/api/workers");
    connected = res && res->status == 200 &&
                json::parse(res->body, nullptr, false)["workers"].size() == 1;
    if (!connected) absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_TRUE(connected) << (*kbd)->Log();

  // A job the fake runner keeps running for 3 s.
  std::thread call([&kbd] {
    httplib::Client tools("http://" + (*kbd)->http_address());
    tools.set_read_timeout(120);
    json args = {{"kernel_code",
                  ReadSourceFile("kernels/examples/gather_linear_naive.cu") +
                      "// FAKE_SLOW_MS=3000\n"}};
    httplib::Result res = tools.Post("/v1/tools/run_correctness", args.dump(),
                                     "application/json");
    EXPECT_TRUE(res && res->status == 200);
  });
  // Joined on every way out (an ASSERT below returns early).
  struct Joiner {
    std::thread& thread;
    ~Joiner() {
      if (thread.joinable()) thread.join();
    }
  } joiner{call};
  json worker;
  for (int i = 0; i < 500; ++i) {
    httplib::Result res = c.Get("/api/workers");
    if (res && res->status == 200) {
      json body = json::parse(res->body, nullptr, false);
      if (body["workers"].size() == 1 && body["workers"][0]["busy"] == true) {
        worker = body["workers"][0];
        break;
      }
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_TRUE(worker.is_object()) << "the worker never showed busy";
  const std::string job_id = worker["current_job_id"];
  EXPECT_FALSE(job_id.empty());
  EXPECT_EQ(worker["jobs_done"], "0");
  EXPECT_EQ(worker["jobs_per_minute"], 0.0);

  httplib::Result running = c.Get("/api/jobs?stage=running");
  ASSERT_TRUE(running);
  json jobs = json::parse(running->body, nullptr, false);
  ASSERT_EQ(jobs["jobs"].size(), 1u) << running->body;
  EXPECT_EQ(jobs["jobs"][0]["id"], job_id);
  EXPECT_EQ(jobs["jobs"][0]["worker_id"], kWorker);

  httplib::Result metrics = c.Get("/metrics");
  ASSERT_TRUE(metrics);
  std::map<std::string, double> s = Samples(metrics->body);
  EXPECT_EQ(s["kbench_jobs{stage=\"running\"}"], 1) << metrics->body;

  call.join();
  httplib::Result after = c.Get("/api/workers");
  ASSERT_TRUE(after);
  json body = json::parse(after->body, nullptr, false);
  ASSERT_EQ(body["workers"].size(), 1u);
  EXPECT_EQ(body["workers"][0]["busy"], false);
  EXPECT_EQ(body["workers"][0]["jobs_done"], "1");
  EXPECT_EQ(body["workers"][0]["jobs_per_minute"], 0.1);
  EXPECT_GT(body["workers"][0]["busy_seconds"].get<double>(), 0);
}

}  // namespace
}  // namespace kbench
