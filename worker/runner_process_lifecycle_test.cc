// RunnerProcess start-up and lifetime against kb_fake_runner: hellos that
// fail, are missing or are garbage; the process group and death signal; the
// environment; destructors that must not hang. The job tests are in
// runner_process_test.cc.
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/runner_process.h"
#include "worker/runner_process_fixtures.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using Kind = RunnerProcess::Outcome::Kind;

using runner_process_testing::FakeOptions;
using runner_process_testing::GoneOrZombie;
using runner_process_testing::kNoProgress;
using runner_process_testing::MakeJob;
using runner_process_testing::RunnerProcessTest;
using runner_process_testing::WaitGone;

TEST_F(RunnerProcessTest, FailedHelloIsFailedPreconditionWithStatus) {
  RunnerProcess::Options options = FakeOptions();
  options.env["KB_FAKE_RUNNER_FAIL_HELLO"] = "1";
  absl::StatusOr<std::unique_ptr<RunnerProcess>> runner =
      RunnerProcess::Start(options);
  ASSERT_FALSE(runner.ok());
  EXPECT_EQ(runner.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(runner.status().message(), HasSubstr("status 3"));
  EXPECT_THAT(runner.status().message(), HasSubstr("before saying hello"));
  EXPECT_THAT(runner.status().message(),
              HasSubstr("failing start-up on purpose"));
}

TEST_F(RunnerProcessTest, MissingExecutableIsFailedPrecondition) {
  RunnerProcess::Options options = FakeOptions();
  options.runner_path = "/nonexistent/kbrunner";
  absl::StatusOr<std::unique_ptr<RunnerProcess>> runner =
      RunnerProcess::Start(options);
  ASSERT_FALSE(runner.ok());
  EXPECT_EQ(runner.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(runner.status().message(), HasSubstr("/nonexistent/kbrunner"));
  EXPECT_THAT(runner.status().message(), HasSubstr("No such file"));
}

TEST_F(RunnerProcessTest, SilentRunnerHitsHelloTimeout) {
  RunnerProcess::Options options;
  options.runner_path = "/bin/sleep";
  options.args = {"60"};
  options.hello_timeout = absl::Milliseconds(300);
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<RunnerProcess>> runner =
      RunnerProcess::Start(options);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  ASSERT_FALSE(runner.ok());
  EXPECT_EQ(runner.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(runner.status().message(), HasSubstr("did not say hello"));
  EXPECT_THAT(runner.status().message(), HasSubstr("300ms"));
}

TEST_F(RunnerProcessTest, GarbageInsteadOfHelloIsFailedPrecondition) {
  RunnerProcess::Options options;
  options.runner_path = "/bin/sh";
  options.args = {"-c", "printf 'garbage!' >&3; sleep 60"};
  absl::StatusOr<std::unique_ptr<RunnerProcess>> runner =
      RunnerProcess::Start(options);
  ASSERT_FALSE(runner.ok());
  EXPECT_EQ(runner.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(runner.status().message(), HasSubstr("malformed"));
  EXPECT_THAT(runner.status().message(), HasSubstr("512 MiB"));
}

TEST_F(RunnerProcessTest, UnhealthyHelloIsFailedPreconditionWithReason) {
  // A hand-made frame: RunnerResponse{result{error{message "no GPU"}},
  // unhealthy: true}, 14 bytes.
  RunnerProcess::Options options;
  options.runner_path = "/bin/sh";
  options.args = {"-c",
                  "printf '\\016\\000\\000\\000\\032\\012\\022\\010"
                  "\\022\\006no GPU\\040\\001' >&3; sleep 60"};
  absl::StatusOr<std::unique_ptr<RunnerProcess>> runner =
      RunnerProcess::Start(options);
  ASSERT_FALSE(runner.ok());
  EXPECT_EQ(runner.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(runner.status().message(), HasSubstr("unusable"));
  EXPECT_THAT(runner.status().message(), HasSubstr("no GPU"));
}

TEST_F(RunnerProcessTest, KillTakesTheRunnersChildren) {
  // The runner starts a background child, prints its pid and never says
  // hello; the hello timeout kills the whole process group.
  RunnerProcess::Options options;
  options.runner_path = "/bin/sh";
  options.args = {"-c", "sleep 60 & echo \"child=$!\"; exec sleep 60"};
  options.hello_timeout = absl::Milliseconds(500);
  absl::StatusOr<std::unique_ptr<RunnerProcess>> runner =
      RunnerProcess::Start(options);
  ASSERT_FALSE(runner.ok());
  EXPECT_EQ(runner.status().code(), absl::StatusCode::kDeadlineExceeded);
  const std::string msg(runner.status().message());
  const size_t at = msg.find("child=");
  ASSERT_NE(at, std::string::npos) << msg;
  size_t end = at + 6;
  while (end < msg.size() && isdigit(static_cast<unsigned char>(msg[end]))) {
    ++end;
  }
  int child = 0;
  ASSERT_TRUE(absl::SimpleAtoi(msg.substr(at + 6, end - at - 6), &child))
      << msg;
  EXPECT_TRUE(WaitGone(child))
      << "background child " << child << " survived the kill";
}

TEST_F(RunnerProcessTest, RunnerDiesWhenTheWorkerDies) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t worker = fork();
  ASSERT_GE(worker, 0);
  if (worker == 0) {
    // A stand-in worker: start a runner, give it a job that hangs (so it
    // does not notice the closed socket), report its pid and wait.
    close(fds[0]);
    absl::StatusOr<std::unique_ptr<RunnerProcess>> runner =
        RunnerProcess::Start(FakeOptions());
    if (!runner.ok()) _exit(1);
    const pid_t pid = (*runner)->pid();
    (*runner)->Run(
        MakeJob("// FAKE_HANG"), absl::Minutes(10),
        [&](const std::string&) { (void)!write(fds[1], &pid, sizeof(pid)); },
        nullptr);
    _exit(2);
  }
  close(fds[1]);
  pid_t runner_pid = -1;
  const ssize_t n = read(fds[0], &runner_pid, sizeof(runner_pid));
  close(fds[0]);
  kill(worker, SIGKILL);
  int status = 0;
  waitpid(worker, &status, 0);
  ASSERT_EQ(n, static_cast<ssize_t>(sizeof(runner_pid)));
  ASSERT_GT(runner_pid, 0) << "the stand-in worker could not start a runner";
  EXPECT_TRUE(WaitGone(runner_pid))
      << "runner " << runner_pid << " outlived its worker";
  if (!GoneOrZombie(runner_pid)) kill(runner_pid, SIGKILL);  // Clean up.
}

TEST_F(RunnerProcessTest, EnvOverridesReachTheRunner) {
  RunnerProcess::Options options;
  options.runner_path = "/bin/sh";
  options.args = {"-c", "echo \"CVD=$CUDA_VISIBLE_DEVICES\"; exit 4"};
  options.env["CUDA_VISIBLE_DEVICES"] = "2";
  absl::StatusOr<std::unique_ptr<RunnerProcess>> runner =
      RunnerProcess::Start(options);
  ASSERT_FALSE(runner.ok());
  EXPECT_EQ(runner.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(runner.status().message(), HasSubstr("status 4"));
  EXPECT_THAT(runner.status().message(), HasSubstr("CVD=2"));
}

TEST_F(RunnerProcessTest, DestructorOfUnresponsiveRunnerReturnsPromptly) {
  std::unique_ptr<RunnerProcess> runner = StartFake();
  ASSERT_NE(runner, nullptr);
  const pid_t pid = runner->pid();
  ASSERT_EQ(kill(pid, SIGSTOP), 0);  // Frozen: it reads nothing, exits never.
  const absl::Time start = absl::Now();
  runner.reset();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_EQ(kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST_F(RunnerProcessTest, DestructorAfterHangReturnsPromptly) {
  std::unique_ptr<RunnerProcess> runner = StartFake();
  ASSERT_NE(runner, nullptr);
  const pid_t pid = runner->pid();
  // A 1 ms budget: the runner is (about to be) hung when Run kills it, and
  // destroying it afterwards is immediate.
  RunnerProcess::Outcome out = runner->Run(
      MakeJob("// FAKE_HANG"), absl::Milliseconds(1), kNoProgress, nullptr);
  EXPECT_EQ(out.kind, Kind::kTimedOut);
  const absl::Time start = absl::Now();
  runner.reset();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_EQ(kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

}  // namespace
}  // namespace kbench
