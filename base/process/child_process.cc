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
#include "base/process/forked_child.h"
#include "spdlog/spdlog.h"

extern char** environ;

namespace kbench {
namespace internal {
namespace {

// Steps of the child between fork and exec, reported to the parent through
// the exec pipe when they fail.
enum ChildStep : int { kStepPdeathsig = 1, kStepFds = 2, kStepExec = 3 };

const char* StepName(int step) {
  switch (step) {
    case kStepPdeathsig:
      return "prctl(PR_SET_PDEATHSIG)";
    case kStepFds:
      return "setting up fds 0, 1 and 3";
    default:
      return "execve";
  }
}

// Runs in the forked child: only async-signal-safe calls until execve.
[[noreturn]] void ChildExec(int sock, int out_w, int exec_w, pid_t parent,
                            const char* path, char* const* argv,
                            char* const* envp) {
  const int report = fcntl(exec_w, F_DUPFD_CLOEXEC, 10);
  auto fail = [report](int step) {
    int msg[2] = {step, errno};
    if (report >= 0) (void)!write(report, msg, sizeof(msg));
    _exit(127);
  };
  setpgid(0, 0);
  if (!PrepareForkedChild(parent)) fail(kStepPdeathsig);
  // Move the ends above the target numbers first, so no dup2 clobbers one.
  const int s = fcntl(sock, F_DUPFD_CLOEXEC, 10);
  const int o = fcntl(out_w, F_DUPFD_CLOEXEC, 10);
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (s < 0 || o < 0 || null_fd < 0) fail(kStepFds);
  // dup2 onto a different number leaves the new fd without FD_CLOEXEC.
  if (dup2(null_fd, 0) < 0 || dup2(o, 1) < 0 || dup2(s, 3) < 0) {
    fail(kStepFds);
  }
  execve(path, argv, envp);
  fail(kStepExec);
  _exit(127);  // Not reached.
}

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
  std::vector<std::string> arg_strs = {path};
  arg_strs.insert(arg_strs.end(), args.begin(), args.end());
  std::vector<std::string> env_strs;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    absl::string_view entry(*e);
    const std::string name(entry.substr(0, entry.find('=')));
    if (env.count(name) == 0) env_strs.emplace_back(entry);
  }
  for (const auto& [name, value] : env) {
    env_strs.push_back(absl::StrCat(name, "=", value));
  }
  std::vector<char*> argv, envp;
  for (std::string& s : arg_strs) argv.push_back(&s[0]);
  argv.push_back(nullptr);
  for (std::string& s : env_strs) envp.push_back(&s[0]);
  envp.push_back(nullptr);

  int sv[2] = {-1, -1}, out_pipe[2] = {-1, -1}, exec_pipe[2] = {-1, -1};
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
      pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(exec_pipe, O_CLOEXEC) != 0) {
    const int err = errno;
    for (int fd :
         {sv[0], sv[1], out_pipe[0], out_pipe[1], exec_pipe[0], exec_pipe[1]}) {
      if (fd >= 0) close(fd);
    }
    return absl::InternalError(absl::StrCat(
        "cannot create the socket and pipes for kbrunner: ", strerror(err)));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    ChildExec(sv[1], out_pipe[1], exec_pipe[1], parent, path.c_str(),
              argv.data(), envp.data());
  }
  const int fork_errno = errno;
  close(sv[1]);
  close(out_pipe[1]);
  close(exec_pipe[1]);
  if (pid < 0) {
    for (int fd : {sv[0], out_pipe[0], exec_pipe[0]}) close(fd);
    return absl::InternalError(
        absl::StrCat("fork for kbrunner failed: ", strerror(fork_errno)));
  }
  setpgid(pid, pid);  // Also in the child; whichever runs first wins.
  pid_ = pid;
  *sock_fd = sv[0];
  *stdout_fd = out_pipe[0];
  fcntl(*stdout_fd, F_SETFL, fcntl(*stdout_fd, F_GETFL) | O_NONBLOCK);

  // The exec pipe closes without data when execve succeeds.
  int msg[2] = {0, 0};
  ssize_t n;
  do {
    n = read(exec_pipe[0], msg, sizeof(msg));
  } while (n < 0 && errno == EINTR);
  close(exec_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof(msg))) {
    Kill();
    return absl::FailedPreconditionError(
        absl::StrCat("cannot start kbrunner '", path, "': ", StepName(msg[0]),
                     " failed: ", strerror(msg[1]),
                     "; check that the runner path exists and is executable"));
  }
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
