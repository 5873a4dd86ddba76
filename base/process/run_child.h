// RunChild: runs a program to completion under a time limit, for helper
// children that read and write files: SpawnProcess (the child dies with
// the calling thread); the parent polls waitpid and kills the child with
// SIGKILL at the deadline. Stdout and stderr are inherited; stdin too,
// unless StartChild is asked for a pipe (a child that waits for its cue).
//
// Thread safety: safe to call from several threads (no shared state); the
// calling thread is the one whose death kills the child (PR_SET_PDEATHSIG).
#ifndef KBENCH_BASE_PROCESS_RUN_CHILD_H_
#define KBENCH_BASE_PROCESS_RUN_CHILD_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kbench {

// How a child ended.
struct ChildExit {
  bool timed_out = false;  // Killed at the deadline.
  int exit_code = -1;      // When it exited.
  int signal = 0;          // When a signal ended it (SIGKILL on timeout).
};

// Runs argv[0] (a path; no PATH search) with `argv`, waiting at most
// `timeout`. Errors as SpawnProcess's (FailedPrecondition when the program
// cannot be executed).
absl::StatusOr<ChildExit> RunChild(const std::vector<std::string>& argv,
                                   absl::Duration timeout);

// A started child.
struct StartedChild {
  pid_t pid = -1;
  int stdin_fd = -1;  // Write end of the child's stdin pipe, or -1.
};

// Starts argv[0] with `argv` and returns at once. With `stdin_pipe`, the
// child's stdin is a pipe whose write end (close-on-exec) the caller owns:
// closing it gives the child end of file. Errors as RunChild's.
absl::StatusOr<StartedChild> StartChild(const std::vector<std::string>& argv,
                                        bool stdin_pipe);

// Waits at most `timeout` for the started child `pid` to end, killing it
// with SIGKILL at the deadline, and reaps it.
absl::StatusOr<ChildExit> WaitChild(pid_t pid, absl::Duration timeout);

}  // namespace kbench

#endif  // KBENCH_BASE_PROCESS_RUN_CHILD_H_
