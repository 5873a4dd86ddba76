// RunnerProcess: the worker's handle on one child kbrunner, the process that
// owns the CUDA context. A kernel that crashes or hangs takes down only the
// runner; the worker sees an Outcome and starts a new one.
//
// The runner is started with its end of a socketpair on fd 3 (runner
// protocol, base/proto_io.h), stdout on a pipe that is captured per job
// (device printf), stderr inherited from the worker and stdin on /dev/null.
// It runs in its own process group, so a kill takes any children with it,
// and with PR_SET_PDEATHSIG(SIGKILL), so it dies when the worker dies. Note
// that Linux delivers the parent-death signal when the *thread* that called
// Start exits: call Start from a thread that lives as long as the runner
// (the worker's job loop), not from a short-lived helper thread.
//
// Ownership: the instance owns the child process and the descriptors; the
// destructor kills the process group, reaps it (waiting at most
// Options::kill_grace, handing a process that will not die to a background
// reaper) and closes the descriptors.
//
// Thread safety: one Run at a time per instance, and Run must not overlap
// with the destructor. Kill(), alive() and pid() may be called from any
// thread, including while Run is in progress in another thread; a Kill
// during Run makes that Run return kCancelled promptly.
#ifndef KBENCH_WORKER_RUNNER_PROCESS_H_
#define KBENCH_WORKER_RUNNER_PROCESS_H_

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/process/child_process.h"
#include "kbench/v1/report.pb.h"
#include "kbench/v1/worker.pb.h"

namespace kbench {

class RunnerProcess {
 public:
  struct Options {
    // Path of the runner executable (kbrunner, or kb_fake_runner in tests).
    std::string runner_path;
    // Arguments passed after argv[0] (which is runner_path).
    std::vector<std::string> args;
    // Environment variables set (or replaced) in the runner's environment on
    // top of the worker's own, e.g. {"CUDA_VISIBLE_DEVICES", "2"}.
    std::map<std::string, std::string> env;
    // How long the runner may take to send its hello (CUDA context and
    // library set-up) before Start gives up and kills it.
    absl::Duration hello_timeout = absl::Seconds(60);
    // Bytes of the runner's stdout (device printf) kept per job; the rest is
    // dropped and replaced by a "[... N bytes truncated]" note.
    size_t max_output_bytes = 64 * 1024;
    // How long to wait for the process to be reaped after SIGKILL (or to exit
    // on its own after closing its socket). A process that is still not gone
    // is handed to a background reaper, so no call blocks longer than this.
    absl::Duration kill_grace = absl::Seconds(5);
  };

  struct Outcome {
    enum class Kind {
      kResult,         // The runner replied with a JobResult.
      kTimedOut,       // The budget ran out; the runner was killed.
      kDied,           // The runner exited or was killed before replying.
      kCancelled,      // The cancel flag was set or Kill() was called.
      kProtocolError,  // The runner sent something malformed; killed.
    };
    Kind kind = Kind::kProtocolError;
    // The runner's reply; set only when kind == kResult.
    v1::JobResult result;
    // The runner reported its context unusable (kResult only). The process
    // has been killed; start a new one.
    bool unhealthy = false;
    // What happened, for logs and for the JobResult's message, e.g.
    // "kbrunner (pid 123) was killed by signal 11 (Segmentation fault)".
    std::string detail;
    // The runner's stdout during this job, truncated to max_output_bytes.
    std::string output;
    // Wall time of Run.
    absl::Duration elapsed;
    // The last progress detail the runner sent, "" if none.
    std::string last_progress;
  };

  // Starts the runner and waits for its hello. Errors: FailedPrecondition
  // when the runner cannot be executed, exits before saying hello (with its
  // exit status and the last lines of its stdout), sends something other
  // than a hello first, or reports itself unhealthy; DeadlineExceeded when no
  // hello arrives within hello_timeout; Internal when a system call fails.
  static absl::StatusOr<std::unique_ptr<RunnerProcess>> Start(
      const Options& options);

  ~RunnerProcess();
  RunnerProcess(const RunnerProcess&) = delete;
  RunnerProcess& operator=(const RunnerProcess&) = delete;

  // The runner's hello (its GPU's spec and start-up time).
  const v1::RunnerHello& hello() const { return hello_; }
  // Process id (and process group id) of the runner.
  pid_t pid() const { return pid_; }
  // True while the runner is running and usable: false once it has exited,
  // been killed, or after any Run outcome other than a healthy kResult.
  bool alive();

  // Sends `job` and waits for its result, at most `budget`. Calls
  // `on_progress` (may be empty) on the calling thread with each progress
  // detail. `cancel` (may be null) is checked every <= 50 ms. Every outcome
  // other than a healthy kResult leaves the process killed and reaped.
  Outcome Run(const v1::RunnerJob& job, absl::Duration budget,
              const std::function<void(const std::string&)>& on_progress,
              const std::atomic<bool>* cancel);

  // Kills the runner's process group and reaps it (waiting at most
  // kill_grace). Idempotent; safe from any thread.
  void Kill();

 private:
  // Result of waiting for the next RunnerResponse.
  enum class Next { kMessage, kDeadline, kCancelled, kEof, kBadFrame };

  explicit RunnerProcess(const Options& options);

  absl::Status Spawn();
  absl::Status AwaitHello();
  // Waits until a whole RunnerResponse is decoded into `resp`, `deadline`
  // passes, `cancel` (or Kill) fires or the socket ends. Drains stdout
  // meanwhile. On kEof/kBadFrame, `*error` says what happened.
  Next NextResponse(absl::Time deadline, const std::atomic<bool>* cancel,
                    v1::RunnerResponse* resp, std::string* error);
  // Decodes one frame from rx_buf_ into `resp` if a whole one is there
  // (*got = true). Returns false, with `*error`, on a malformed frame.
  bool DecodeFrame(v1::RunnerResponse* resp, std::string* error, bool* got);
  // Reads the runner's stdout without blocking: at most about 1 MiB, or,
  // with `all`, until it is empty or closed.
  void DrainStdout(bool all);
  void AppendOutput(const char* data, size_t n);
  // Returns this job's output (with the truncation note) and resets it.
  std::string TakeOutput();
  // Waits up to kill_grace for the runner to exit on its own, then kills it.
  // Returns a description of how it ended.
  std::string ReapAfterEof();
  // Kills and reaps; returns the description of how it ended.
  std::string KillAndDescribe();
  // How the process ended ("exited with status 3", "was killed by signal 9
  // (Killed)"); "" while it has not been reaped.
  std::string EndDescription();

  // Reaps without blocking if the child has exited. Requires mu_.
  void TryReapLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void KillLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  pid_t pid_ = -1;      // child_.pid(), copied by Spawn: readable without mu_.
  int sock_fd_ = -1;    // Parent end of the socketpair.
  int stdout_fd_ = -1;  // Read end of the runner's stdout pipe (O_NONBLOCK).
  bool stdout_eof_ = false;
  bool sock_eof_ = false;   // The runner closed its end (or it failed).
  std::string sock_error_;  // Why the socket ended, if not a clean close.
  v1::RunnerHello hello_;
  std::string rx_buf_;  // Bytes received but not yet decoded.
  std::string output_;  // This job's stdout, first max_output_bytes.
  size_t output_dropped_ = 0;
  std::atomic<bool> kill_requested_{false};

  absl::Mutex mu_;
  // The process: spawning, killing, reaping (base/process/child_process.h).
  internal::ChildProcess child_ ABSL_GUARDED_BY(mu_);
  bool usable_ ABSL_GUARDED_BY(mu_) = true;
};

}  // namespace kbench

#endif  // KBENCH_WORKER_RUNNER_PROCESS_H_
