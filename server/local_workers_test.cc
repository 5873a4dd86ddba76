// Tests of LocalWorkers (server/local_workers.h): parsing of the
// --local-worker mode, and the workers' command line, which names kbd's
// token file but never holds the token. No worker processes are started.
#include "server/local_workers.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(LocalWorkersTest, OffMeansNoWorkers) {
  absl::StatusOr<int> n = LocalWorkers::WorkerCount("off");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 0);
}

TEST(LocalWorkersTest, NumberIsTheCount) {
  for (const auto& [mode, want] : std::vector<std::pair<std::string, int>>{
           {"3", 3}, {"0", 0}, {"1", 1}, {"64", 64}}) {
    absl::StatusOr<int> n = LocalWorkers::WorkerCount(mode);
    ASSERT_TRUE(n.ok()) << mode << ": " << n.status();
    EXPECT_EQ(*n, want) << mode;
  }
}

TEST(LocalWorkersTest, AutoCountsVisibleGpus) {
  // The count depends on the host (0 without a driver); it is never an
  // error and never negative.
  absl::StatusOr<int> n = LocalWorkers::WorkerCount("auto");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_GE(*n, 0);
  EXPECT_LE(*n, 64);
}

TEST(LocalWorkersTest, OtherValuesAreInvalidAndNamed) {
  for (const std::string mode : {"x", "-1", "65", "3x", "1.5", "AUTO"}) {
    absl::StatusOr<int> n = LocalWorkers::WorkerCount(mode);
    ASSERT_FALSE(n.ok()) << mode << " parsed as " << *n;
    EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument) << mode;
    EXPECT_THAT(n.status().message(), HasSubstr("'" + mode + "'"));
    EXPECT_THAT(n.status().message(), HasSubstr("off, auto"));
  }
}

TEST(LocalWorkersTest, WorkersGetTheTokenFileNeverTheToken) {
  LocalWorkers::Options o;
  o.server_address = "127.0.0.1:50051";
  o.worker_binary = "/opt/kbench/bin/kbworker";
  o.runner_binary = "/opt/kbench/bin/kbrunner";
  o.token_file = "/var/lib/kbench/worker.token";
  const LocalWorkers workers(o);
  const std::vector<std::string> args = workers.WorkerArgs(3);
  ASSERT_FALSE(args.empty());
  EXPECT_EQ(args[0], "/opt/kbench/bin/kbworker");
  auto after = [&](const std::string& flag) -> std::string {
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == flag) return args[i + 1];
    }
    return "";
  };
  EXPECT_EQ(after("--token-file"), "/var/lib/kbench/worker.token");
  EXPECT_EQ(after("--gpu"), "3");
  EXPECT_EQ(after("--server"), "127.0.0.1:50051");
  // ps shows a command line to every user: no token value on it, in any
  // form.
  for (const std::string& a : args) {
    EXPECT_THAT(a, Not(HasSubstr("--token="))) << a;
    EXPECT_THAT(a, Not(HasSubstr("Bearer"))) << a;
  }
}

}  // namespace
}  // namespace kbench
