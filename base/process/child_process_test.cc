#include "base/process/child_process.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "absl/time/clock.h"

namespace kbench::internal {
namespace {

using ::testing::HasSubstr;

// Spawns `path` with `args`; closes the descriptors Spawn hands back.
absl::Status SpawnAndClose(ChildProcess& child, const std::string& path,
                           const std::vector<std::string>& args) {
  int sock = -1, out = -1;
  absl::Status status = child.Spawn(path, args, {}, &sock, &out);
  for (int fd : {sock, out}) {
    if (fd >= 0) close(fd);
  }
  return status;
}

// Polls TryReap until the child is reaped or `limit` passes.
void ReapWithin(ChildProcess& child, absl::Duration limit) {
  const absl::Time until = absl::Now() + limit;
  while (!child.reaped() && absl::Now() < until) {
    child.TryReap();
    absl::SleepFor(absl::Milliseconds(5));
  }
}

TEST(ChildProcessTest, AFailedExecSaysWhyItNeverStarted) {
  ChildProcess child(absl::Seconds(2));
  absl::Status status = SpawnAndClose(child, "/nonexistent/kbrunner", {});
  ASSERT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_TRUE(child.reaped());
  EXPECT_EQ(child.wait_status(), -1);
  EXPECT_THAT(child.EndDescription(), HasSubstr("could not be started"));
  EXPECT_THAT(child.EndDescription(), HasSubstr("/nonexistent/kbrunner"));
  child.Kill();  // Idempotent on a child that never ran.
}

TEST(ChildProcessTest, DescribesAnExitStatus) {
  ChildProcess child(absl::Seconds(2));
  ASSERT_TRUE(SpawnAndClose(child, "/bin/sh", {"-c", "exit 3"}).ok());
  EXPECT_EQ(child.EndDescription(), "is still running");
  ReapWithin(child, absl::Seconds(10));
  ASSERT_TRUE(child.reaped());
  EXPECT_EQ(child.EndDescription(), "exited with status 3");
}

TEST(ChildProcessTest, KillDescribesTheSignal) {
  ChildProcess child(absl::Seconds(5));
  ASSERT_TRUE(SpawnAndClose(child, "/bin/sleep", {"60"}).ok());
  child.Kill();
  ASSERT_TRUE(child.reaped());
  EXPECT_THAT(child.EndDescription(), HasSubstr("killed by signal 9"));
}

}  // namespace
}  // namespace kbench::internal
