// Shared by the RunnerProcess tests (runner_process_test.cc,
// runner_process_lifecycle_test.cc): the path of kb_fake_runner next to the
// test binary, options and a fixture that start it, a small job, and waits
// on process ids.
#ifndef KBENCH_WORKER_RUNNER_PROCESS_FIXTURES_H_
#define KBENCH_WORKER_RUNNER_PROCESS_FIXTURES_H_

#include <sys/types.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "worker/runner_process.h"

namespace kbench {
namespace runner_process_testing {
inline constexpr absl::Duration kBudget = absl::Seconds(30);

inline std::string FakeRunnerPath() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  std::string self(buf, static_cast<size_t>(n));
  return self.substr(0, self.rfind('/')) + "/kb_fake_runner";
}

inline RunnerProcess::Options FakeOptions() {
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

inline v1::RunnerJob MakeJob(const std::string& source,
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
inline bool GoneOrZombie(pid_t pid) {
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!stat || !std::getline(stat, line)) return true;
  const size_t paren = line.rfind(')');
  if (paren == std::string::npos || paren + 2 >= line.size()) return true;
  const char state = line[paren + 2];
  return state == 'Z' || state == 'X';
}

// Waits (at most 10 s) for `pid` to stop running.
inline bool WaitGone(pid_t pid) {
  const absl::Time until = absl::Now() + absl::Seconds(10);
  while (!GoneOrZombie(pid)) {
    if (absl::Now() > until) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

inline const auto kNoProgress = [](const std::string&) {};

}  // namespace runner_process_testing
}  // namespace kbench

#endif  // KBENCH_WORKER_RUNNER_PROCESS_FIXTURES_H_
