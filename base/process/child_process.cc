#include "base/process/child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "base/process/spawn.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace internal {
namespace {

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) {
    return absl::StrCat("exited with status ", WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return absl::StrCat("was killed by signal ", sig, " (", strsignal(sig), ")",
                        WCOREDUMP(status) ? ", core dumped" : "");
  }
  return absl::StrCat("ended with wait status ", status);
}

}  // namespace

ChildProcess::ChildProcess(absl::Duration kill_grace)
    : kill_grace_(kill_grace) {}

absl::Status ChildProcess::Spawn(const std::string& path,
                                 const std::vector<std::string>& args,
                                 const std::map<std::string, std::string>& env,
                                 int* sock_fd, int* stdout_fd) {
  int sv[2] = {-1, -1}, out_pipe[2] = {-1, -1};
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
      pipe2(out_pipe, O_CLOEXEC) != 0) {
    const int err = errno;
    for (int fd : {sv[0], sv[1], out_pipe[0], out_pipe[1]}) {
      if (fd >= 0) close(fd);
    }
    return absl::InternalError(absl::StrCat(
        "cannot create the socket and pipes for kbrunner: ", strerror(err)));
  }
  SpawnOptions spawn;
  spawn.argv = {path};
  spawn.argv.insert(spawn.argv.end(), args.begin(), args.end());
  spawn.env = env;
  spawn.fds = {{0, kDevNull}, {1, out_pipe[1]}, {3, sv[1]}};
  spawn.new_process_group = true;
  absl::StatusOr<pid_t> pid = SpawnProcess(spawn);
  close(sv[1]);
  close(out_pipe[1]);
  *sock_fd = sv[0];
  *stdout_fd = out_pipe[0];
  fcntl(*stdout_fd, F_SETFL, fcntl(*stdout_fd, F_GETFL) | O_NONBLOCK);
  if (absl::IsFailedPrecondition(pid.status())) {
    // SpawnProcess reaped it.
    reaped_ = gone_ = true;
    wait_status_ = -1;
    start_error_ = std::string(pid.status().message());
    return absl::FailedPreconditionError(
        absl::StrCat(pid.status().message(),
                     "; check that the runner path exists and is executable"));
  }
  if (!pid.ok()) {
    for (int fd : {*sock_fd, *stdout_fd}) close(fd);
    *sock_fd = *stdout_fd = -1;
    return pid.status();
  }
  pid_ = *pid;
  spdlog::info("started kbrunner '{}' as pid {}", path, pid_);
  return absl::OkStatus();
}

void ChildProcess::TryReap() {
  if (gone_ || pid_ <= 0) return;
  siginfo_t info;
  std::memset(&info, 0, sizeof(info));
  // WNOWAIT keeps the zombie, so its pid (= the process group id) cannot be
  // reused while the group's leftovers are killed.
  if (waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) == 0) {
    if (info.si_pid != pid_) return;  // Still running.
    kill(-pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    wait_status_ = status;
  } else if (errno == ECHILD) {
    wait_status_ = -1;  // Reaped by someone else (SIGCHLD ignored?).
  } else {
    return;
  }
  reaped_ = true;
  gone_ = true;
}

void ChildProcess::Kill() {
  if (gone_ || pid_ <= 0) return;
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);  // In case setpgid had not happened yet.
  const absl::Time until = absl::Now() + kill_grace_;
  while (true) {
    TryReap();
    if (reaped_ || absl::Now() >= until) break;
    absl::SleepFor(absl::Milliseconds(2));
  }
  if (!reaped_) {
    spdlog::warn(
        "kbrunner pid {} did not die within {} of SIGKILL (stuck in the "
        "driver?); leaving it to a background reaper",
        pid_, absl::FormatDuration(kill_grace_));
    const pid_t pid = pid_;
    std::thread([pid] {
      while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }).detach();
    gone_ = true;
  }
}

std::string ChildProcess::EndDescription() const {
  if (!start_error_.empty()) {
    return absl::StrCat("could not be started: ", start_error_);
  }
  if (reaped_) {
    return wait_status_ == -1 ? "ended (its exit status was collected "
                                "elsewhere)"
                              : DescribeWaitStatus(wait_status_);
  }
  if (gone_) {
    return absl::StrCat("did not exit within ",
                        absl::FormatDuration(kill_grace_), " of SIGKILL");
  }
  return "is still running";
}

}  // namespace internal
}  // namespace kbench
