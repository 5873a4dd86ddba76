// CompileJail: what a process that compiles untrusted kernel sources gives
// up before it reads the first one, so that no source can read the host
// (an #include of /proc/self/environ, of the store or of the worker token,
// by any spelling the preprocessor accepts) or reach the network:
//  - Landlock (Linux 5.13+): the file system becomes read-only and visible
//    only below `readable_dirs` (the CUDA include tree); nothing may be
//    written, executed or created anywhere. From ABI 4 TCP bind/connect are
//    refused; from ABI 6 abstract Unix sockets and signals to processes
//    outside the jail are too.
//  - seccomp: socket(), exec, ptrace, unshare/setns, mounts, bpf,
//    io_uring, keyrings and module loading fail with EPERM (x32 syscalls
//    too; other syscall ABIs kill the process).
//  - PR_SET_NO_NEW_PRIVS, so nothing regains what was given up.
// The source policy (compiler/source_policy.h) stays the friendly first line
// that explains the rules; the jail is what holds when a spelling slips by.
//
// It is one-way, and binds the calling thread and every thread and child it
// starts later; so it refuses (Internal) a process that already has other
// threads. Call it after everything the process needs from elsewhere is
// loaded (kbcompile compiles a probe first, so NVRTC's builtins library is
// mapped).
//
// Thread safety: call from the process's only thread.
#ifndef KBENCH_COMPILER_SANDBOX_COMPILE_JAIL_H_
#define KBENCH_COMPILER_SANDBOX_COMPILE_JAIL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace kbench {

struct CompileJailReport {
  int landlock_abi = 0;        // The kernel's Landlock ABI version in force.
  bool network_rules = false;  // Landlock TCP rules (ABI >= 4) applied.
  bool scoped = false;         // Landlock scopes (ABI >= 6) applied.
  bool seccomp = false;        // The seccomp filter is installed.
  // One line for logs and /healthz, e.g. "landlock ABI 7, seccomp".
  std::string Describe() const;
};

// The Landlock ABI version this kernel offers; 0 when Landlock is missing or
// disabled (then no jail can be entered).
int LandlockAbi();

// Enters the jail. FailedPrecondition when Landlock is unavailable (the
// caller then must not compile untrusted sources unless its operator said
// the host is trusted); Internal when a step fails half-way (the process
// should exit: it may hold some of the restrictions).
absl::StatusOr<CompileJailReport> EnterCompileJail(
    const std::vector<std::string>& readable_dirs);

}  // namespace kbench

#endif  // KBENCH_COMPILER_SANDBOX_COMPILE_JAIL_H_
