// RunnerProcess against kb_fake_runner (testing/fake_runner_main.cc), which
// must be built next to this test binary: cmake --build <build> --target
// kb_fake_runner runner_process_test.
#include "worker/runner_process.h"

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

namespace kbench {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using Kind = RunnerProcess::Outcome::Kind;

constexpr absl::Duration kBudget = absl::Seconds(30);

std::string FakeRunnerPath() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  std::string self(buf, static_cast<size_t>(n));
  return self.substr(0, self.rfind('/')) + "/kb_fake_runner";
}

RunnerProcess::Options FakeOptions() {
  RunnerProcess::Options options;
  options.runner_path = FakeRunnerPath();
  options.hello_timeout = absl::Seconds(30);
  options.kill_grace = absl::Seconds(5);
  return options;
}

class RunnerProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(access(FakeRunnerPath().c_str(), X_OK), 0)
        << "kb_fake_runner not found at " << FakeRunnerPath()
        << "; build the kb_fake_runner target";
  }

  std::unique_ptr<RunnerProcess> StartFake(
      const RunnerProcess::Options& options = FakeOptions()) {
    absl::StatusOr<std::unique_ptr<RunnerProcess>> runner =
        RunnerProcess::Start(options);
    EXPECT_TRUE(runner.ok()) << runner.status();
    if (!runner.ok()) return nullptr;
    return std::move(runner).value();
  }
};

v1::RunnerJob MakeJob(const std::string& source,
                      v1::JobKind kind = v1::JOB_KIND_CORRECTNESS) {
  v1::RunnerJob job;
  job.set_job_id("job-1");
  job.set_kind(kind);
  job.set_source(source);
  // A one-dim problem and the plan kbd would have parsed for it: the fake
  // runner, like kbrunner, refuses a job without a valid plan.
  job.mutable_problem()->set_name("tiny");
  job.mutable_problem()->add_dims()->set_name("B");
  v1::LaunchSpec* launch = job.mutable_plan()->add_launches();
  launch->set_entry("k");
  launch->add_grid("B");
  launch->add_block("32");
  launch->set_line(1);
  job.set_seed(7);
  v1::ShapeSet* small = job.add_check_sets();
  small->set_name("small");
  v1::Shape* b1 = small->add_shapes();
  b1->set_name("b1");
  (*b1->mutable_dims())["B"] = 1;
  v1::Shape* b7 = small->add_shapes();
  b7->set_name("b7");
  (*b7->mutable_dims())["B"] = 7;
  v1::ShapeSet* odd = job.add_check_sets();
  odd->set_name("odd");
  v1::Shape* b3 = odd->add_shapes();
  b3->set_name("b3");
  (*b3->mutable_dims())["B"] = 3;
  job.set_timing_set("small");
  *job.mutable_timing_shape() = *b7;
  return job;
}

// True once `pid` no longer runs: gone, or a zombie nobody reaps (orphans
// are reparented to PID 1, which may not reap in a container).
bool GoneOrZombie(pid_t pid) {
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!stat || !std::getline(stat, line)) return true;
  const size_t paren = line.rfind(')');
  if (paren == std::string::npos || paren + 2 >= line.size()) return true;
  const char state = line[paren + 2];
  return state == 'Z' || state == 'X';
}

// Waits (at most 10 s) for `pid` to stop running.
bool WaitGone(pid_t pid) {
  const absl::Time until = absl::Now() + absl::Seconds(10);
  while (!GoneOrZombie(pid)) {
    if (absl::Now() > until) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

const auto kNoProgress = [](const std::string&) {};

TEST_F(RunnerProcessTest, StartReceivesFakeHello) {
  std::unique_ptr<RunnerProcess> runner = StartFake();
  ASSERT_NE(runner, nullptr);
  EXPECT_EQ(runner->hello().spec().name(), "kbench fake GPU (tests only)");
  EXPECT_EQ(runner->hello().spec().arch(), "sm_90");
  EXPECT_EQ(runner->hello().spec().sm_count(), 132);
  EXPECT_GT(runner->pid(), 0);
  EXPECT_TRUE(runner->alive());
}

TEST_F(RunnerProcessTest, PassingCorrectnessJobReportsTrialsAndProgress) {
  std::unique_ptr<RunnerProcess> runner = StartFake();
  ASSERT_NE(runner, nullptr);
  std::vector<std::string> progress;
  RunnerProcess::Outcome out = runner->Run(
      MakeJob("__global__ void k() {}"), kBudget,
      [&](const std::string& d) { progress.push_back(d); }, nullptr);
  ASSERT_EQ(out.kind, Kind::kResult) << out.detail;
  EXPECT_FALSE(out.unhealthy);
  EXPECT_EQ(out.result.verdict(), v1::VERDICT_PASSED);
  EXPECT_TRUE(out.result.correctness().passed());
  ASSERT_EQ(out.result.correctness().trials_size(), 3);
  EXPECT_EQ(out.result.correctness().trials(0).shape_set(), "small");
  EXPECT_EQ(out.result.correctness().trials(0).shape(), "b1");
  EXPECT_EQ(out.result.correctness().trials(1).shape(), "b7");
  EXPECT_EQ(out.result.correctness().trials(2).shape_set(), "odd");
  EXPECT_EQ(out.result.correctness().trials(2).shape(), "b3");
  EXPECT_TRUE(out.result.correctness().trials(2).passed());
  EXPECT_FALSE(out.result.has_timing());
  EXPECT_THAT(out.result.log(), HasSubstr("fake"));
  EXPECT_EQ(progress, std::vector<std::string>{"running (fake)"});
  EXPECT_EQ(out.last_progress, "running (fake)");
  EXPECT_EQ(out.output, "");
  EXPECT_TRUE(runner->alive());
}

TEST_F(RunnerProcessTest, JobWithoutAValidPlanIsRefusedWithTheReason) {
  std::unique_ptr<RunnerProcess> runner = StartFake();
  ASSERT_NE(runner, nullptr);
  v1::RunnerJob no_plan = MakeJob("__global__ void k() {}");
  no_plan.clear_plan();
  RunnerProcess::Outcome out =
      runner->Run(no_plan, kBudget, kNoProgress, nullptr);
  ASSERT_EQ(out.kind, Kind::kResult) << out.detail;
  EXPECT_EQ(out.result.verdict(), v1::VERDICT_ERROR);
  EXPECT_EQ(out.result.error().code(),
            static_cast<int>(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(out.result.message(), HasSubstr("carries no launch plan"));

  v1::RunnerJob bad = MakeJob("__global__ void k() {}");
  bad.mutable_plan()->mutable_launches(0)->set_grid(0, "B * Q");
  out = runner->Run(bad, kBudget, kNoProgress, nullptr);
  ASSERT_EQ(out.kind, Kind::kResult) << out.detail;
  EXPECT_EQ(out.result.verdict(), v1::VERDICT_REJECTED);
  EXPECT_THAT(out.result.message(),
              HasSubstr("uses 'Q', which is not a dim of tiny"));
  EXPECT_TRUE(runner->alive());  // A refused job does not end the runner.
}

TEST_F(RunnerProcessTest, SubmitJobHasTimingAndRunnerServesSeveralJobs) {
  std::unique_ptr<RunnerProcess> runner = StartFake();
  ASSERT_NE(runner, nullptr);
  for (int i = 0; i < 3; ++i) {
    RunnerProcess::Outcome out =
        runner->Run(MakeJob("__global__ void k() {}", v1::JOB_KIND_SUBMIT),
                    kBudget, kNoProgress, nullptr);
    ASSERT_EQ(out.kind, Kind::kResult) << out.detail;
    EXPECT_EQ(out.result.verdict(), v1::VERDICT_PASSED);
    ASSERT_TRUE(out.result.has_timing());
    EXPECT_EQ(out.result.timing().reference_name(),
              "fake reference (tests only)");
    EXPECT_EQ(out.result.timing().shape(), "b7");
    EXPECT_EQ(out.result.timing().kernel().n(), 10);
    EXPECT_GT(out.result.timing().kernel().median_us(), 0);
    EXPECT_GT(out.result.timing().reference().median_us(), 0);
    EXPECT_TRUE(runner->alive());
  }
}

TEST_F(RunnerProcessTest, SlowJobSendsProgressUntilItPasses) {
  std::unique_ptr<RunnerProcess> runner = StartFake();
  ASSERT_NE(runner, nullptr);
  int calls = 0;
  RunnerProcess::Outcome out = runner->Run(
      MakeJob("// FAKE_SLOW_MS=300"), kBudget,
      [&](const std::string& d) {
        ++calls;
        EXPECT_THAT(d, StartsWith("slow (fake)"));
      },
      nullptr);
  ASSERT_EQ(out.kind, Kind::kResult) << out.detail;
  EXPECT_EQ(out.result.verdict(), v1::VERDICT_PASSED);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(out.last_progress, "slow (fake): 200/300 ms");
}

TEST_F(RunnerProcessTest, FailingJobIsAResult) {
  std::unique_ptr<RunnerProcess> runner = StartFake();
  ASSERT_NE(runner, nullptr);
  RunnerProcess::Outcome out =
      runner->Run(MakeJob("// FAKE_FAIL"), kBudget, kNoProgress, nullptr);
  ASSERT_EQ(out.kind, Kind::kResult) << out.detail;
  EXPECT_FALSE(out.unhealthy);
  EXPECT_EQ(out.result.verdict(), v1::VERDICT_FAILED);
  ASSERT_EQ(out.result.correctness().trials_size(), 1);
  EXPECT_DOUBLE_EQ(out.result.correctness().trials(0).max_abs_error(), 1.5);
  EXPECT_FALSE(out.result.correctness().trials(0).passed());
  EXPECT_TRUE(runner->alive());
}

TEST_F(RunnerProcessTest, CrashIsDiedWithSignalAndCapturedStdout) {
  std::unique_ptr<RunnerProcess> runner = StartFake();
  ASSERT_NE(runner, nullptr);
  RunnerProcess::Outcome out =
      runner->Run(MakeJob("// FAKE_CRASH"), kBudget, kNoProgress, nullptr);
  ASSERT_EQ(out.kind, Kind::kDied) << out.detail;
  EXPECT_THAT(out.detail, HasSubstr("signal 11"));
  EXPECT_THAT(out.detail, HasSubstr("Segmentation fault"));
  EXPECT_THAT(out.detail, HasSubstr("job-1"));
  EXPECT_THAT(out.output, HasSubstr("about to crash on purpose"));
  EXPECT_FALSE(runner->alive());

  // A dead runner refuses further jobs instead of hanging.
  RunnerProcess::Outcome again =
      runner->Run(MakeJob("ok"), kBudget, kNoProgress, nullptr);
  EXPECT_EQ(again.kind, Kind::kDied);
  EXPECT_THAT(again.detail, HasSubstr("is not running"));
  EXPECT_THAT(again.detail, HasSubstr("signal 11"));
}

TEST_F(RunnerProcessTest, AfterCrashANewRunnerPasses) {
  std::unique_ptr<RunnerProcess> runner = StartFake();
  ASSERT_NE(runner, nullptr);
  const pid_t first_pid = runner->pid();
  RunnerProcess::Outcome out =
      runner->Run(MakeJob("// FAKE_CRASH"), kBudget, kNoProgress, nullptr);
  ASSERT_EQ(out.kind, Kind::kDied);
  ASSERT_FALSE(runner->alive());
  runner = StartFake();  // What the worker does after any unusable outcome.
  ASSERT_NE(runner, nullptr);
  EXPECT_NE(runner->pid(), first_pid);
  out = runner->Run(MakeJob("ok"), kBudget, kNoProgress, nullptr);
  ASSERT_EQ(out.kind, Kind::kResult) << out.detail;
  EXPECT_EQ(out.result.verdict(), v1::VERDICT_PASSED);
}

TEST_F(RunnerProcessTest, HangIsKilledAtTheBudget) {
  std::unique_ptr<RunnerProcess> runner = StartFake();
  ASSERT_NE(runner, nullptr);
  const pid_t pid = runner->pid();
  const absl::Time start = absl::Now();
  RunnerProcess::Outcome out = runner->Run(
      MakeJob("// FAKE_HANG"), absl::Milliseconds(500), kNoProgress, nullptr);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  ASSERT_EQ(out.kind, Kind::kTimedOut) << out.detail;
  EXPECT_THAT(out.detail, HasSubstr("500ms"));
  EXPECT_THAT(out.detail, HasSubstr("hanging (fake)"));
  EXPECT_EQ(out.last_progress, "hanging (fake)");
  EXPECT_GE(out.elapsed, absl::Milliseconds(500));
  EXPECT_FALSE(runner->alive());
  // Killed and reaped: the pid no longer exists.
  EXPECT_EQ(kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST_F(RunnerProcessTest, CancelFlagFromAnotherThreadCancels) {
  std::unique_ptr<RunnerProcess> runner = StartFake();
  ASSERT_NE(runner, nullptr);
  std::atomic<bool> cancel{false};
  absl::Notification hanging;
  std::thread canceller([&] {
    hanging.WaitForNotification();
    cancel.store(true);
  });
  const absl::Time start = absl::Now();
  RunnerProcess::Outcome out = runner->Run(
      MakeJob("// FAKE_HANG"), absl::Minutes(10),
      [&](const std::string&) {
        if (!hanging.HasBeenNotified()) hanging.Notify();
      },
      &cancel);
  canceller.join();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  ASSERT_EQ(out.kind, Kind::kCancelled) << out.detail;
  EXPECT_THAT(out.detail, HasSubstr("cancelled"));
  EXPECT_FALSE(runner->alive());
}

TEST_F(RunnerProcessTest, KillFromAnotherThreadEndsRun) {
  std::unique_ptr<RunnerProcess> runner = StartFake();
  ASSERT_NE(runner, nullptr);
  absl::Notification hanging;
  std::thread killer([&] {
    hanging.WaitForNotification();
    runner->Kill();
    runner->Kill();  // Idempotent.
  });
  RunnerProcess::Outcome out = runner->Run(
      MakeJob("// FAKE_HANG"), absl::Minutes(10),
      [&](const std::string&) {
        if (!hanging.HasBeenNotified()) hanging.Notify();
      },
      nullptr);
  killer.join();
  ASSERT_EQ(out.kind, Kind::kCancelled) << out.detail;
  EXPECT_THAT(out.detail, HasSubstr("Kill()"));
  EXPECT_FALSE(runner->alive());
}

TEST_F(RunnerProcessTest, UnhealthyResultIsReportedAndRunnerRetired) {
  std::unique_ptr<RunnerProcess> runner = StartFake();
  ASSERT_NE(runner, nullptr);
  RunnerProcess::Outcome out =
      runner->Run(MakeJob("// FAKE_UNHEALTHY"), kBudget, kNoProgress, nullptr);
  ASSERT_EQ(out.kind, Kind::kResult) << out.detail;
  EXPECT_TRUE(out.unhealthy);
  EXPECT_EQ(out.result.verdict(), v1::VERDICT_CRASHED);
  EXPECT_EQ(out.result.correctness().message(),
            "CUDA_ERROR_ILLEGAL_ADDRESS (fake)");
  EXPECT_FALSE(runner->alive());
}

TEST_F(RunnerProcessTest, LargeStdoutIsTruncatedWithANote) {
  std::unique_ptr<RunnerProcess> runner = StartFake();
  ASSERT_NE(runner, nullptr);
  RunnerProcess::Outcome out = runner->Run(MakeJob("// FAKE_PRINTF=200000"),
                                           kBudget, kNoProgress, nullptr);
  ASSERT_EQ(out.kind, Kind::kResult) << out.detail;
  EXPECT_EQ(out.result.verdict(), v1::VERDICT_PASSED);
  const size_t max = RunnerProcess::Options().max_output_bytes;
  ASSERT_EQ(max, 64u * 1024u);
  const std::string note = "\n[... 134464 bytes truncated]";
  ASSERT_EQ(out.output.size(), max + note.size());
  EXPECT_EQ(out.output.substr(max), note);
  EXPECT_EQ(out.output.substr(0, 4), "abcd");
  EXPECT_EQ(out.output[63], '\n');

  // The next job's output starts afresh.
  out =
      runner->Run(MakeJob("// FAKE_PRINTF=100"), kBudget, kNoProgress, nullptr);
  ASSERT_EQ(out.kind, Kind::kResult) << out.detail;
  EXPECT_EQ(out.output.size(), 100u);
  EXPECT_EQ(out.output.find("truncated"), std::string::npos);
}

TEST_F(RunnerProcessTest, SmallOutputLimitIsHonoured) {
  RunnerProcess::Options options = FakeOptions();
  options.max_output_bytes = 10;
  std::unique_ptr<RunnerProcess> runner = StartFake(options);
  ASSERT_NE(runner, nullptr);
  RunnerProcess::Outcome out =
      runner->Run(MakeJob("// FAKE_PRINTF=25"), kBudget, kNoProgress, nullptr);
  ASSERT_EQ(out.kind, Kind::kResult) << out.detail;
  EXPECT_EQ(out.output, "abcdefghij\n[... 15 bytes truncated]");
}

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
