// RunChild and StartChild: exit codes, signals, exec failures, the
// deadline, and a child that waits on its stdin pipe for its cue.
#include "base/process/run_child.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

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

TEST(RunChildTest, AProgramThatCannotBeExecutedIsNamedInTheError) {
  auto r = RunChild({"/nonexistent/kbrunner"}, absl::Seconds(30));
  ASSERT_TRUE(absl::IsFailedPrecondition(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("/nonexistent/kbrunner"),
            std::string::npos);
  EXPECT_NE(r.status().message().find("No such file"), std::string::npos);
}

TEST(RunChildTest, KillsTheChildAtTheDeadline) {
  auto r = RunChild({"/bin/sleep", "30"}, absl::Milliseconds(100));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->signal, SIGKILL);
}

TEST(RunChildTest, AStartedChildWaitsForWhatItsStdinPipeSays) {
  auto c = StartChild({"/bin/sh", "-c", "read code; exit $code"}, true);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_GE(c->stdin_fd, 0);
  // Not done before its cue.
  auto early = WaitChild(c->pid, absl::Milliseconds(50));
  ASSERT_TRUE(early.ok());
  EXPECT_TRUE(early->timed_out);  // Killed: start another for the cue.
  auto d = StartChild({"/bin/sh", "-c", "read code; exit $code"}, true);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(write(d->stdin_fd, "5\n", 2), 2);
  close(d->stdin_fd);
  auto r = WaitChild(d->pid, absl::Seconds(30));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->exit_code, 5);
  close(c->stdin_fd);
}

TEST(RunChildTest, ClosingTheStdinPipeGivesTheChildEndOfFile) {
  auto c = StartChild({"/bin/sh", "-c", "cat > /dev/null; exit 4"}, true);
  ASSERT_TRUE(c.ok()) << c.status();
  close(c->stdin_fd);
  auto r = WaitChild(c->pid, absl::Seconds(30));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 4);
}

TEST(RunChildTest, AnEmptyCommandIsInvalid) {
  EXPECT_TRUE(absl::IsInvalidArgument(RunChild({}, absl::Seconds(1)).status()));
}

}  // namespace
}  // namespace kbench
