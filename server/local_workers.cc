#include "server/local_workers.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/gpu_probe.h"
#include "base/process/spawn.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

int64_t NowMs() { return absl::ToUnixMillis(absl::Now()); }

}  // namespace

absl::StatusOr<int> LocalWorkers::WorkerCount(const std::string& mode) {
  if (mode == "off" || mode.empty()) return 0;
  if (mode == "auto") return CountCudaGpus();
  int n = 0;
  if (absl::SimpleAtoi(mode, &n) && n >= 0 && n <= 64) return n;
  return absl::InvalidArgumentError(absl::StrCat(
      "--local-worker must be off, auto or a number of GPUs; got '", mode,
      "'"));
}

std::vector<std::string> LocalWorkers::WorkerArgs(int gpu) const {
  std::vector<std::string> args = {options_.worker_binary,  "--server",
                                   options_.server_address, "--gpu",
                                   std::to_string(gpu),     "--runner",
                                   options_.runner_binary,  "--log-level",
                                   options_.log_level};
  if (!options_.token_file.empty()) {
    args.insert(args.end(), {"--token-file", options_.token_file});
  }
  return args;
}

pid_t LocalWorkers::Spawn(int gpu) {
  SpawnOptions spawn;
  spawn.argv = WorkerArgs(gpu);
  spawn.fds = {{1, STDERR_FILENO}};  // kbd's stdout stays clean.
  // SIGTERM, not SIGKILL: the worker then stops its own kbrunner child.
  spawn.death_signal = SIGTERM;
  absl::StatusOr<pid_t> pid = SpawnProcess(spawn);
  if (!pid.ok()) {
    spdlog::error("starting kbworker for GPU {}: {}", gpu,
                  pid.status().ToString());
    return -1;
  }
  spdlog::info("started kbworker pid {} for GPU {}", *pid, gpu);
  return *pid;
}

void LocalWorkers::Start(int count) {
  {
    absl::MutexLock lock(&mu_);
    for (int gpu = 0; gpu < count; ++gpu) {
      Child c;
      c.gpu = gpu;
      c.pid = Spawn(gpu);
      c.started_ms = NowMs();
      children_.push_back(c);
    }
  }
  if (count > 0) supervisor_ = std::thread([this] { Supervise(); });
}

void LocalWorkers::Supervise() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&stopping_),
                           absl::Milliseconds(200));
      if (stopping_) return;
      for (Child& c : children_) {
        if (c.given_up || c.pid <= 0) continue;
        int status = 0;
        if (waitpid(c.pid, &status, WNOHANG) != c.pid) continue;
        const bool quick = NowMs() - c.started_ms < 10000;
        c.quick_failures = quick ? c.quick_failures + 1 : 0;
        const std::string how =
            WIFEXITED(status)
                ? absl::StrCat("exited with status ", WEXITSTATUS(status))
                : absl::StrCat("was killed by signal ", WTERMSIG(status));
        if (c.quick_failures >= options_.max_quick_failures) {
          spdlog::error(
              "kbworker for GPU {} {}; it failed {} times in a row at start, "
              "so kbd stops restarting it (see its log above)",
              c.gpu, how, c.quick_failures);
          c.given_up = true;
          c.pid = -1;
          continue;
        }
        spdlog::warn("kbworker for GPU {} {}; restarting it", c.gpu, how);
        // Back off a little longer after each quick failure.
        mu_.Unlock();
        absl::SleepFor(absl::Milliseconds(500 * c.quick_failures));
        mu_.Lock();
        if (stopping_) return;
        c.pid = Spawn(c.gpu);
        c.started_ms = NowMs();
      }
    }
  }
}

LocalWorkers::~LocalWorkers() {
  std::vector<Child> children;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    children = children_;
  }
  if (supervisor_.joinable()) supervisor_.join();
  for (const Child& c : children) {
    if (c.pid > 0) kill(c.pid, SIGTERM);
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (const Child& c : children) {
    if (c.pid <= 0) continue;
    while (waitpid(c.pid, nullptr, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(c.pid, SIGKILL);
        waitpid(c.pid, nullptr, 0);
        break;
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
  }
}

}  // namespace kbench
