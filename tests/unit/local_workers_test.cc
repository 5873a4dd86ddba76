// Tests of LocalWorkers::WorkerCount (server/local_workers.h): parsing of
// the --local-worker mode. No worker processes are started.
#include "server/local_workers.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

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

}  // namespace
}  // namespace kbench
