// SpawnProcess: the one fork/exec of kbench. Every child process (the
// worker's kbrunner, kbd's kbcompile and local kbworkers, the runner's
// line-load children, the test and bench harnesses' children) starts here,
// so the steps between fork and exec are written, and reviewed, once:
// the death signal (PR_SET_PDEATHSIG), a clean signal mask and default
// dispositions, the descriptor map, and an exec failure reported to the
// parent through a close-on-exec pipe instead of a mysterious exit code.
//
// Thread safety: safe to call from several threads (no shared state). The
// calling thread is the one whose death sends the child `death_signal`
// (PR_SET_PDEATHSIG follows the thread, not the process).
#ifndef KBENCH_BASE_PROCESS_SPAWN_H_
#define KBENCH_BASE_PROCESS_SPAWN_H_

#include <signal.h>
#include <sys/types.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace kbench {

struct SpawnOptions {
  // The program (argv[0] is its path: no PATH search) and its arguments.
  std::vector<std::string> argv;
  // Variables set, or replaced, on top of this process's environment.
  std::map<std::string, std::string> env;
  // The child's descriptors as {child fd, this process's fd}; kDevNull as
  // the source opens /dev/null (read-only for fd 0, write-only otherwise).
  // Unnamed descriptors keep their close-on-exec flag: 0, 1 and 2 are
  // inherited unless named; kbench opens everything else O_CLOEXEC.
  std::vector<std::pair<int, int>> fds;
  // The child leads a process group of its own, so that kill(-pid) also
  // reaches what it starts.
  bool new_process_group = false;
  // Sent to the child when the spawning thread dies (PR_SET_PDEATHSIG).
  // SIGKILL for helpers; SIGTERM for a child that must clean up its own
  // children first (kbd's local kbworkers).
  int death_signal = SIGKILL;
};

// Source in SpawnOptions::fds that opens /dev/null.
inline constexpr int kDevNull = -1;

// Starts the child and returns its pid once it has exec'd. Errors:
// InvalidArgument for an empty argv or a bad descriptor map;
// Internal when a pipe or fork fails; FailedPrecondition, naming the step
// and errno ("execve '/x/kbrunner': No such file or directory"), when the
// child cannot reach exec. The child has then been reaped: on any error
// nothing is left running.
absl::StatusOr<pid_t> SpawnProcess(const SpawnOptions& options);

}  // namespace kbench

#endif  // KBENCH_BASE_PROCESS_SPAWN_H_
