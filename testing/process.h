// Test helpers for starting the real binaries (kbd, kbworker, kbctl) on
// loopback, and for skipping GPU tests on hosts without one.
//
// Thread safety: each object is used by one test thread.
#ifndef KBENCH_TESTING_PROCESS_H_
#define KBENCH_TESTING_PROCESS_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kbench::testing {

// Folder of kbd, kbworker, kbrunner, kbctl and kb_fake_runner: env
// KBENCH_BIN_DIR, else the test binary's folder if it holds kbd, else
// <test folder>/../bin (the bundle's layout).
std::string BinDir();

// A fresh temporary directory, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A child process with stdout and stderr captured to files.
class Child {
 public:
  // Starts `argv` (argv[0] is a path) with `env` added to the environment.
  static absl::StatusOr<std::unique_ptr<Child>> Start(
      const std::vector<std::string>& argv,
      const std::map<std::string, std::string>& env = {});
  ~Child();  // Kills (SIGKILL) and reaps if still running.

  pid_t pid() const { return pid_; }
  // SIGTERM, then SIGKILL after `grace`; returns the wait status.
  int Stop(absl::Duration grace = absl::Seconds(5));
  void Kill();  // SIGKILL now, and reap.
  // Waits up to `timeout` for exit; returns the exit code, or -1 if it is
  // still running (or died by a signal).
  int Wait(absl::Duration timeout);
  bool Running();
  std::string Stdout() const;
  std::string Stderr() const;

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::string out_path_, err_path_;
  std::unique_ptr<TempDir> dir_;
};

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};
// Runs a command to completion (killed after `timeout`).
CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env = {},
                         absl::Duration timeout = absl::Seconds(120));

// A kbd on 127.0.0.1 with free ports (gRPC and HTTP) and its own data
// directory.
class KbdProcess {
 public:
  struct Options {
    // e.g. {"--local-worker=1"}. An --http-listen here replaces the
    // default 127.0.0.1:0 (say, --http-listen=off).
    std::vector<std::string> extra_args;
    std::string data_dir;  // Default: a fresh temp dir.
  };
  static absl::StatusOr<std::unique_ptr<KbdProcess>> Start(
      const Options& options);
  ~KbdProcess();

  const std::string& address() const { return address_; }
  // "127.0.0.1:PORT" of the HTTP tools; empty when HTTP is off.
  const std::string& http_address() const { return http_address_; }
  const std::string& data_dir() const { return data_dir_; }
  // The worker token file kbd uses (DATA_DIR/worker.token unless
  // --worker-token-file was among the extra args).
  const std::string& worker_token_file() const { return token_file_; }
  Child* child() { return child_.get(); }
  // Stops kbd (SIGTERM) and returns its exit code.
  int Stop();
  std::string Log() const { return child_ ? child_->Stderr() : ""; }

 private:
  std::unique_ptr<TempDir> temp_;
  std::string data_dir_, address_, http_address_, token_file_;
  std::unique_ptr<Child> child_;
};

// The worker token file of the kbd started (by KbdProcess) at `address`;
// "" for an unknown address.
std::string WorkerTokenFileFor(const std::string& address);

// Starts a kbworker for `address` on GPU `gpu`, with `runner` (default: the
// real kbrunner). Unless `extra_args` has --token-file, the worker gets the
// token file of the KbdProcess at `address`.
absl::StatusOr<std::unique_ptr<Child>> StartWorker(
    const std::string& address, const std::string& runner = "", int gpu = 0,
    const std::vector<std::string>& extra_args = {});

// The path of a file or folder of the source tree (relative to the repo
// root; env KBENCH_SOURCE_DIR overrides where the tree is, as a bundle run
// elsewhere needs).
std::string SourcePath(const std::string& relative_path);

// Reads a file of the source tree (SourcePath(relative_path)).
std::string ReadSourceFile(const std::string& relative_path);

// True when an NVIDIA GPU and driver are usable here.
bool HasGpu();

}  // namespace kbench::testing

// Skips the current test when no GPU is present.
#define KB_SKIP_WITHOUT_GPU()                                                \
  do {                                                                       \
    if (!::kbench::testing::HasGpu()) {                                      \
      GTEST_SKIP() << "no NVIDIA GPU/driver on this host: gpu test skipped"; \
    }                                                                        \
  } while (false)

#endif  // KBENCH_TESTING_PROCESS_H_
