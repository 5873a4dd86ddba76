// ForkedChild: the set-up every child process of kbench needs between
// fork() and exec() (the worker's runner children, kbd's kbcompile
// children), written once.
//
// Thread safety: async-signal-safe; call only in a freshly forked child.
#ifndef KBENCH_BASE_PROCESS_FORKED_CHILD_H_
#define KBENCH_BASE_PROCESS_FORKED_CHILD_H_

#include <sys/types.h>

namespace kbench {

// Asks for SIGKILL when the forking thread's process dies
// (PR_SET_PDEATHSIG); exits with 126 when `parent` is already gone; then
// clears the signal mask and resets every disposition to the default,
// since exec keeps both. Returns false (errno set) when prctl fails.
bool PrepareForkedChild(pid_t parent);

}  // namespace kbench

#endif  // KBENCH_BASE_PROCESS_FORKED_CHILD_H_
