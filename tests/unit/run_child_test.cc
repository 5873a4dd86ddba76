// RunChild: exit codes, signals, exec failures and the deadline.
#include "common/run_child.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace kbench {
namespace {

TEST(RunChildTest, ReportsTheExitCode) {
  auto ok = RunChild({"/bin/sh", "-c", "exit 0"}, absl::Seconds(30));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_FALSE(ok->timed_out);
  EXPECT_EQ(ok->exit_code, 0);
  EXPECT_EQ(ok->signal, 0);
  auto three = RunChild({"/bin/sh", "-c", "exit 3"}, absl::Seconds(30));
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(three->exit_code, 3);
}

TEST(RunChildTest, ReportsTheSignalThatEndedIt) {
  auto r = RunChild({"/bin/sh", "-c", "kill -TERM $$"}, absl::Seconds(30));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->signal, SIGTERM);
  EXPECT_EQ(r->exit_code, -1);
}

TEST(RunChildTest, AProgramThatCannotBeExecutedExitsWith127) {
  auto r = RunChild({"/nonexistent/kbrunner"}, absl::Seconds(30));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 127);
}

TEST(RunChildTest, KillsTheChildAtTheDeadline) {
  auto r = RunChild({"/bin/sleep", "30"}, absl::Milliseconds(100));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->signal, SIGKILL);
}

TEST(RunChildTest, AnEmptyCommandIsInvalid) {
  EXPECT_TRUE(absl::IsInvalidArgument(RunChild({}, absl::Seconds(1)).status()));
}

}  // namespace
}  // namespace kbench
