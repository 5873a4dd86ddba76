// ChildProcess: the process half of RunnerProcess (worker/runner_process.h):
// starting the kbrunner child through SpawnProcess (base/process/spawn.h:
// an exec failure is an error naming the step), killing its process group
// and reaping it, waiting at most kill_grace. The runner protocol (messages,
// stdout capture, jobs) stays in worker/runner_process.cc. Internal to
// worker/.
//
// The child runs with its end of a socketpair on fd 3, stdout on a pipe,
// stderr inherited and stdin on /dev/null, in its own process group and with
// PR_SET_PDEATHSIG(SIGKILL) (see runner_process.h for what that requires of
// the calling thread).
//
// Ownership: owns the child process (by pid) but not the descriptors Spawn
// hands back, which the caller closes. The destructor neither kills nor
// waits: the owner calls Kill() first.
//
// Thread safety: none. The owner serialises every call (RunnerProcess makes
// each under its mutex).
#ifndef KBENCH_BASE_PROCESS_CHILD_PROCESS_H_
#define KBENCH_BASE_PROCESS_CHILD_PROCESS_H_

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace kbench {
namespace internal {

class ChildProcess {
 public:
  // `kill_grace`: how long Kill waits for the process to be reaped after
  // SIGKILL before handing it to a background reaper.
  explicit ChildProcess(absl::Duration kill_grace);
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Starts `path` with `args` after argv[0], in the worker's environment
  // with `env` set (or replaced) on top. Once the fork has succeeded, sets
  // *sock_fd (the parent's end of the socketpair) and *stdout_fd (the read
  // end of the stdout pipe, O_NONBLOCK), also when the exec then fails; the
  // caller owns both. Errors: Internal when a system call fails;
  // FailedPrecondition when the child cannot exec (it has then been killed
  // and reaped as by Kill). Call at most once.
  absl::Status Spawn(const std::string& path,
                     const std::vector<std::string>& args,
                     const std::map<std::string, std::string>& env,
                     int* sock_fd, int* stdout_fd);

  // Process id (and process group id) of the child; -1 before Spawn.
  pid_t pid() const { return pid_; }
  // The child was reaped: its wait status is known.
  bool reaped() const { return reaped_; }
  // Reaped or handed to the background reaper: never signal it again.
  bool gone() const { return gone_; }

  // Reaps without blocking if the child has exited (killing what is left of
  // its process group first).
  void TryReap();
  // Kills the child's process group and reaps it, waiting at most
  // kill_grace; a process that will not die is handed to a background
  // reaper. Idempotent.
  void Kill();
  // How the process ended ("exited with status 3", "was killed by signal 9
  // (Killed)", "could not be started: ..."); "is still running" while it has
  // not been reaped.
  std::string EndDescription() const;
  // The raw wait status once reaped (see waitpid); -1 when unknown.
  int wait_status() const { return reaped_ ? wait_status_ : -1; }

 private:
  const absl::Duration kill_grace_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  bool gone_ = false;
  int wait_status_ = 0;
  // Why exec failed (Spawn's error), when it did; the child was reaped by
  // SpawnProcess then.
  std::string start_error_;
};

}  // namespace internal
}  // namespace kbench

#endif  // KBENCH_BASE_PROCESS_CHILD_PROCESS_H_
