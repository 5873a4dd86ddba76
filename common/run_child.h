// RunChild: runs a program to completion under a time limit, for helper
// children that need no pipes (they read and write files): fork,
// PrepareForkedChild (the child dies with its parent), exec; the parent
// polls waitpid and kills the child with SIGKILL at the deadline. Stdin,
// stdout and stderr are inherited.
//
// Thread safety: safe to call from several threads (no shared state); the
// calling thread is the one whose death kills the child (PR_SET_PDEATHSIG).
#ifndef KBENCH_COMMON_RUN_CHILD_H_
#define KBENCH_COMMON_RUN_CHILD_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kbench {

// How a child ended.
struct ChildExit {
  bool timed_out = false;  // Killed at the deadline.
  int exit_code = -1;      // When it exited: 127 when exec failed.
  int signal = 0;          // When a signal ended it (SIGKILL on timeout).
};

// Runs argv[0] (a path; no PATH search) with `argv`, waiting at most
// `timeout`. InvalidArgument for an empty argv; Internal when fork fails.
absl::StatusOr<ChildExit> RunChild(const std::vector<std::string>& argv,
                                   absl::Duration timeout);

}  // namespace kbench

#endif  // KBENCH_COMMON_RUN_CHILD_H_
