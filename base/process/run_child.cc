#include "base/process/run_child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/process/spawn.h"
#include "base/status_macros.h"

namespace kbench {

absl::StatusOr<StartedChild> StartChild(const std::vector<std::string>& argv,
                                        bool stdin_pipe) {
  SpawnOptions spawn;
  spawn.argv = argv;
  int fds[2] = {-1, -1};
  if (stdin_pipe) {
    if (pipe2(fds, O_CLOEXEC) != 0) {
      return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
    }
    spawn.fds = {{0, fds[0]}};
  }
  absl::StatusOr<pid_t> pid = SpawnProcess(spawn);
  if (stdin_pipe) close(fds[0]);
  if (!pid.ok()) {
    if (stdin_pipe) close(fds[1]);
    return pid.status();
  }
  StartedChild out;
  out.pid = *pid;
  out.stdin_fd = fds[1];
  return out;
}

absl::StatusOr<ChildExit> WaitChild(pid_t pid, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  ChildExit out;
  int status = 0;
  while (true) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      return absl::InternalError(
          absl::StrCat("waitpid: ", std::strerror(errno)));
    }
    if (absl::Now() >= deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      out.timed_out = true;
      break;
    }
    absl::SleepFor(absl::Milliseconds(2));
  }
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  return out;
}

absl::StatusOr<ChildExit> RunChild(const std::vector<std::string>& argv,
                                   absl::Duration timeout) {
  ASSIGN_OR_RETURN(const StartedChild child, StartChild(argv, false));
  return WaitChild(child.pid, timeout);
}

}  // namespace kbench
