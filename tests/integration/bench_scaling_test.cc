// bench/scaling (the throughput table of issue 17) against kbd with two
// workers and the stand-in runner: it counts the GPUs, runs the jobs it
// says on both, each a distinct source (so none is served from the cache),
// and writes its row and JSON. The figures themselves mean something only
// on GPUs (docs/benchmarks.md); here the tool's plumbing is what is tested.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "testing/process.h"

namespace kbench {
namespace {

using ::kbench::testing::BinDir;
using ::kbench::testing::Child;
using ::kbench::testing::KbdProcess;
using ::kbench::testing::SourcePath;
using ::kbench::testing::StartWorker;
using ::testing::HasSubstr;

TEST(BenchScalingTest, RunsDistinctJobsOnEveryGpuAndReportsTheRate) {
  auto kbd = KbdProcess::Start({});
  ASSERT_TRUE(kbd.ok()) << kbd.status();
  std::unique_ptr<Child> workers[2];
  for (int gpu = 0; gpu < 2; ++gpu) {
    auto w = StartWorker((*kbd)->address(), BinDir() + "/kb_fake_runner", gpu);
    ASSERT_TRUE(w.ok()) << w.status();
    workers[gpu] = std::move(*w);
  }
  testing::TempDir dir;
  const std::string json_path = dir.path() + "/scaling.json";
  const testing::CommandResult r = testing::RunCommand(
      {BinDir() + "/scaling", "--server", (*kbd)->address(), "--kernel",
       SourcePath("kernels/examples/gather_linear_naive.cu"), "--wait-gpus",
       "2", "--jobs-per-gpu", "3", "--json", json_path},
      {}, absl::Seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << (*kbd)->Log();
  EXPECT_THAT(r.out, HasSubstr("| GPUs | jobs (submit) |"));
  std::ifstream in(json_path);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["gpus"], 2);
  EXPECT_EQ(j["jobs"], 6);
  EXPECT_EQ(j["in_flight"], 4);
  EXPECT_EQ(j["failed"], 0);
  EXPECT_GT(j["jobs_per_s"].get<double>(), 0);
  // Both workers ran jobs, and every job ran: the two warm-up jobs and
  // six distinct sources, none served from the cache.
  int leased = 0;
  for (const auto& w : workers) {
    const std::string log = w->Stderr();
    int n = 0;
    for (size_t at = log.find("leased job"); at != std::string::npos;
         at = log.find("leased job", at + 1)) {
      ++n;
    }
    EXPECT_GT(n, 0) << log;
    leased += n;
  }
  EXPECT_EQ(leased, 8);
}

}  // namespace
}  // namespace kbench
