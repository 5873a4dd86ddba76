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
#include "worker/runner_process_fixtures.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using Kind = RunnerProcess::Outcome::Kind;

using runner_process_testing::FakeOptions;
using runner_process_testing::kBudget;
using runner_process_testing::kNoProgress;
using runner_process_testing::MakeJob;
using runner_process_testing::RunnerProcessTest;

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

}  // namespace
}  // namespace kbench
