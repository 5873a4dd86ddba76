// LocalWorkers: starts and supervises one kbworker process per local GPU
// (kbd --local-worker=auto|N), so one command brings up the whole service
// on a GPU host. Each worker connects back over gRPC like a remote one. A
// worker that exits is restarted with back-off; one that keeps failing at
// start (e.g. no usable GPU) is given up on after a few tries. Workers get
// the path of kbd's worker token file (--token-file), never the token: a
// command line is visible to every user through ps.
//
// Ownership: owns the child processes; the destructor stops them (SIGTERM,
// then SIGKILL) and joins the supervisor thread.
// Thread safety: Start and the destructor from one thread.
#ifndef KBENCH_SERVER_LOCAL_WORKERS_H_
#define KBENCH_SERVER_LOCAL_WORKERS_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace kbench {

class LocalWorkers {
 public:
  struct Options {
    // "off", "auto" (one per visible GPU) or a count.
    std::string mode = "off";
    // kbd's address as the workers should dial it.
    std::string server_address;
    // Paths of the kbworker and kbrunner executables.
    std::string worker_binary;
    std::string runner_binary;
    // Log level passed to the workers.
    std::string log_level = "info";
    // kbd's worker token file (contract/worker_auth.h), passed by path.
    std::string token_file;
    // Consecutive failed starts (exit within 10 s) before giving up.
    int max_quick_failures = 5;
  };

  // Parses the mode into a count ("auto": CountCudaGpus()).
  // InvalidArgument for anything but off, auto or a number 0..64.
  static absl::StatusOr<int> WorkerCount(const std::string& mode);

  explicit LocalWorkers(const Options& options) : options_(options) {}
  ~LocalWorkers();

  // Starts `count` workers (GPU indices 0..count-1) and the supervisor.
  void Start(int count);

  // The command line of the worker for `gpu` (argv[0] is the binary).
  std::vector<std::string> WorkerArgs(int gpu) const;

 private:
  struct Child {
    int gpu = 0;
    pid_t pid = -1;
    int quick_failures = 0;
    int64_t started_ms = 0;
    bool given_up = false;
  };
  pid_t Spawn(int gpu);
  void Supervise();

  Options options_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<Child> children_ ABSL_GUARDED_BY(mu_);
  std::thread supervisor_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_LOCAL_WORKERS_H_
