// CompileSandbox: runs NVRTC in a small pool of persistent kbcompile child
// processes (compiler/sandbox/kbcompile_main.cc), so a compile that explodes
// (deep template recursion, huge unrolling) cannot stall or exhaust kbd.
//
// Each child has an address-space limit (RLIMIT_AS) and, per compile, a
// CPU-time limit (RLIMIT_CPU raised to its usage so far plus cpu_limit:
// SIGXCPU stops a runaway compile). The parent also enforces wall_limit and
// kills the child. A child that is killed or dies is replaced by a fresh one
// on the next compile. Requests and responses are length-prefixed protobuf
// frames (base/proto_io.h) on the child's stdin and stdout
// (compiler/sandbox/compile_sandbox.proto); the child logs to stderr (kbd's).
//
// Each child enters a jail (compiler/sandbox/compile_jail.h: Landlock +
// seccomp) before its first compile: it can read only the CUDA include tree. A
// child that cannot be jailed refuses every compile (FAILED_PRECONDITION)
// unless Options::allow_unjailed; Start() reports which, and jail() says what
// the children run under, for kbd's log and /healthz.
//
// Ownership: owns the children (killed and reaped by the destructor);
// borrows nothing after construction.
// Children are started with PR_SET_PDEATHSIG(SIGKILL), so they die with kbd;
// Linux ties that to the *thread* that forked them, so call Start and
// Compile from long-lived threads (kbd: main and the CompileService pool). A
// child found dead before a compile is replaced transparently.
//
// Thread safety: Compile may be called from many threads at once; each call
// holds one child for its duration (at most Options::children run at once,
// further calls wait).
#ifndef KBENCH_COMPILER_SANDBOX_COMPILE_SANDBOX_H_
#define KBENCH_COMPILER_SANDBOX_COMPILE_SANDBOX_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "compiler/nvrtc_compiler.h"

namespace kbench {

class CompileSandbox {
 public:
  struct Options {
    // The kbcompile binary; empty means "kbcompile" beside this executable
    // (/proc/self/exe).
    std::string kbcompile_path;
    // Children (= compiles running at once); 0 means one per CPU core.
    int children = 0;
    // RLIMIT_AS of each child, in bytes.
    int64_t memory_limit_bytes = int64_t{4} << 30;
    // CPU time one compile may use.
    absl::Duration cpu_limit = absl::Seconds(20);
    // Wall-clock time one compile may take before the parent kills it.
    absl::Duration wall_limit = absl::Seconds(30);
    // Compile options sent to the children (include dirs, -lineinfo), so
    // their reports and cache keys match an in-process NvrtcCompiler's.
    CompileOptions compile_options;
    // Let children compile without a jail when the kernel has no Landlock
    // (kbd's --trust-host-compiles): only for hosts whose every client is
    // trusted, since a source can then #include any file kbd can read.
    bool allow_unjailed = false;
  };

  explicit CompileSandbox(Options options);
  ~CompileSandbox();
  CompileSandbox(const CompileSandbox&) = delete;
  CompileSandbox& operator=(const CompileSandbox&) = delete;

  // Starts one child (more start on demand) and checks it answers.
  // FailedPrecondition when kbcompile is missing or cannot start. A child
  // that cannot be jailed (and allow_unjailed is false) is not an error
  // here: every compile is then refused, and Health() says why.
  absl::Status Start();

  // OK, or FailedPrecondition when compiles are refused because the host
  // offers no jail (the message says how to mend it): for /healthz.
  absl::Status Health() const;

  // What the children run under, as the first child reported it:
  // "landlock ABI 7, no TCP, scoped, seccomp", or "unjailed (trusted
  // host)"; empty before Start.
  std::string jail() const;

  // Like NvrtcCompiler::Compile, in a child. ResourceExhausted, with a
  // message holding "compile" and "limit", when the compile hit its CPU,
  // wall-clock or memory limit (deterministic: the same source hits it
  // again); Unavailable when the child died of something else (killed from
  // outside, the OOM killer, a crash): retry, and never cache it.
  absl::StatusOr<CompileOutput> Compile(const std::string& source,
                                        const std::string& filename,
                                        const std::string& arch);

  // Children started so far (respawns included).
  int64_t spawned() const;

  // Kills one idle child, as if it had crashed (for tests).
  void KillIdleChildForTest();

 private:
  struct Child {
    pid_t pid = -1;
    int in_fd = -1;   // The child's stdin (we write requests).
    int out_fd = -1;  // The child's stdout (we read responses).
    // The child's stderr is a pipe of its own, relayed line by line to
    // kbd's log by `relay` (ends at the child's exit): a jailed compiler
    // that reopens /proc/self/fd/2 reaches only its own log, not kbd's.
    std::thread relay;
  };
  absl::StatusOr<std::unique_ptr<Child>> Spawn();
  // Kills (if alive) and reaps `child`; returns its wait status.
  static int Reap(Child* child, bool kill_first);
  absl::StatusOr<CompileOutput> RunOn(Child* child, const std::string& source,
                                      const std::string& filename,
                                      const std::string& arch, bool* reusable);
  std::string LimitAdvice() const;

  Options options_;
  int max_children_ = 1;
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Child>> idle_ ABSL_GUARDED_BY(mu_);
  int live_ ABSL_GUARDED_BY(mu_) = 0;  // Idle plus in use.
  int64_t spawned_ ABSL_GUARDED_BY(mu_) = 0;
  std::string jail_ ABSL_GUARDED_BY(mu_);
  absl::Status refusal_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kbench

#endif  // KBENCH_COMPILER_SANDBOX_COMPILE_SANDBOX_H_
