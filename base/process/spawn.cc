#include "base/process/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

extern char** environ;

namespace kbench {
namespace {

// Steps of the child between fork and exec, reported to the parent through
// the exec pipe when one fails.
enum ChildStep : int { kStepPdeathsig = 1, kStepFds = 2, kStepExec = 3 };

std::string StepName(int step, const std::string& path) {
  switch (step) {
    case kStepPdeathsig:
      return "prctl(PR_SET_PDEATHSIG)";
    case kStepFds:
      return "setting up the child's descriptors";
    default:
      return absl::StrCat("execve '", path, "'");
  }
}

// What the child needs, built before fork: after it, a child of a threaded
// process may make only async-signal-safe calls, so nothing here allocates.
struct ChildPlan {
  const SpawnOptions* options;
  char* const* argv;
  char* const* envp;
  int* staged;   // One slot per options->fds entry.
  int fd_floor;  // Staged copies go at or above this number.
  pid_t parent;
  int report;  // Write end of the exec pipe.
};

[[noreturn]] void ChildMain(const ChildPlan& plan) {
  const int report = fcntl(plan.report, F_DUPFD_CLOEXEC, plan.fd_floor);
  auto fail = [report](int step) {
    int msg[2] = {step, errno};
    if (report >= 0) (void)!write(report, msg, sizeof(msg));
    _exit(127);
  };
  const SpawnOptions& o = *plan.options;
  if (o.new_process_group) setpgid(0, 0);
  if (prctl(PR_SET_PDEATHSIG, o.death_signal) != 0) fail(kStepPdeathsig);
  // The parent died before prctl: nobody would send the signal.
  if (getppid() != plan.parent) _exit(126);
  // Exec keeps the signal mask and ignored signals; the child starts clean.
  sigset_t empty;
  sigemptyset(&empty);
  sigprocmask(SIG_SETMASK, &empty, nullptr);
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);
  // Copy every source above the targets first, so that no dup2 clobbers a
  // source another entry still needs.
  for (size_t i = 0; i < o.fds.size(); ++i) {
    const auto& [target, source] = o.fds[i];
    int from = source;
    if (source == kDevNull) {
      from = open("/dev/null", (target == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
    }
    plan.staged[i] =
        from < 0 ? -1 : fcntl(from, F_DUPFD_CLOEXEC, plan.fd_floor);
    if (plan.staged[i] < 0) fail(kStepFds);
  }
  // dup2 onto another number leaves the new descriptor without FD_CLOEXEC.
  for (size_t i = 0; i < o.fds.size(); ++i) {
    if (dup2(plan.staged[i], o.fds[i].first) < 0) fail(kStepFds);
  }
  execve(plan.argv[0], plan.argv, plan.envp);
  fail(kStepExec);
  _exit(127);  // Not reached.
}

}  // namespace

absl::StatusOr<pid_t> SpawnProcess(const SpawnOptions& options) {
  if (options.argv.empty() || options.argv[0].empty()) {
    return absl::InvalidArgumentError("no program to run");
  }
  int fd_floor = 10;
  for (const auto& [target, source] : options.fds) {
    if (target < 0 || target > 1000 || (source < 0 && source != kDevNull)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad descriptor map entry {", target, ", ", source, "}"));
    }
    fd_floor = std::max(fd_floor, target + 1);
  }
  std::vector<std::string> arg_strs = options.argv;
  std::vector<std::string> env_strs;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const absl::string_view entry(*e);
    const std::string name(entry.substr(0, entry.find('=')));
    if (options.env.count(name) == 0) env_strs.emplace_back(entry);
  }
  for (const auto& [name, value] : options.env) {
    env_strs.push_back(absl::StrCat(name, "=", value));
  }
  std::vector<char*> argv, envp;
  for (std::string& s : arg_strs) argv.push_back(s.data());
  argv.push_back(nullptr);
  for (std::string& s : env_strs) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<int> staged(options.fds.size(), -1);

  int exec_pipe[2] = {-1, -1};
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    return absl::InternalError(
        absl::StrCat("pipe for starting '", options.argv[0],
                     "' failed: ", std::strerror(errno)));
  }
  const ChildPlan plan{&options, argv.data(), envp.data(), staged.data(),
                       fd_floor, getpid(),    exec_pipe[1]};
  const pid_t pid = fork();
  if (pid == 0) ChildMain(plan);
  const int fork_errno = errno;
  close(exec_pipe[1]);
  if (pid < 0) {
    close(exec_pipe[0]);
    return absl::InternalError(
        absl::StrCat("fork for '", options.argv[0],
                     "' failed: ", std::strerror(fork_errno)));
  }
  // Also in the child; whichever runs first wins, and a kill(-pid) right
  // after this call reaches the group either way.
  if (options.new_process_group) setpgid(pid, pid);
  // The exec pipe closes without data when execve succeeds.
  int msg[2] = {0, 0};
  ssize_t n;
  do {
    n = read(exec_pipe[0], msg, sizeof(msg));
  } while (n < 0 && errno == EINTR);
  close(exec_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof(msg))) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot start '", options.argv[0], "': ",
        StepName(msg[0], options.argv[0]), " failed: ", std::strerror(msg[1])));
  }
  return pid;
}

}  // namespace kbench
