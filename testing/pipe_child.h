// PipeChild: a child process whose stdin and stdout are pipes to the test,
// for speaking a line protocol with it (`kbctl mcp`); its stderr goes to a
// file. Every line read from its stdout is kept, so a test can check that
// nothing but the protocol was written there.
//
// Thread safety: used by one test thread.
#ifndef KBENCH_TESTING_PIPE_CHILD_H_
#define KBENCH_TESTING_PIPE_CHILD_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "testing/process.h"

namespace kbench::testing {

class PipeChild {
 public:
  // Starts `argv` (argv[0] is a path) with `env` added to the environment.
  // Ignores SIGPIPE in this process, so that writing to a child that died
  // is an error, not the test's end.
  static absl::StatusOr<std::unique_ptr<PipeChild>> Start(
      const std::vector<std::string>& argv,
      const std::map<std::string, std::string>& env = {});
  ~PipeChild();  // Closes the pipes, kills (SIGKILL) and reaps.

  PipeChild(const PipeChild&) = delete;
  PipeChild& operator=(const PipeChild&) = delete;

  pid_t pid() const { return pid_; }

  // Writes `line` and a newline to the child's stdin.
  absl::Status WriteLine(const std::string& line);
  // Closes the child's stdin (it reads end of file).
  void CloseStdin();

  // The next line of the child's stdout, without its newline.
  // DeadlineExceeded when none is complete within `timeout`; OutOfRange at
  // end of file (the rest, if any, is kept in lines()).
  absl::StatusOr<std::string> ReadLine(absl::Duration timeout);
  // Reads stdout until end of file (at most `timeout`); returns what came
  // after the last line returned by ReadLine, and keeps it in lines().
  std::string ReadToEnd(absl::Duration timeout);
  // Every line read from stdout so far, in order (a last line without a
  // newline included once the end is read).
  const std::vector<std::string>& lines() const { return lines_; }

  // Waits up to `timeout` for exit; returns the exit code, or -1 if it is
  // still running (or died by a signal).
  int Wait(absl::Duration timeout);
  void Kill();  // SIGKILL now, and reap.
  std::string Stderr() const;

 private:
  PipeChild() = default;
  // Reads what is available within `timeout` into buffer_; false at end of
  // file or on error.
  bool Fill(absl::Duration timeout);

  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  bool eof_ = false;
  std::string buffer_;
  std::vector<std::string> lines_;
  std::string err_path_;
  std::unique_ptr<TempDir> dir_;
};

}  // namespace kbench::testing

#endif  // KBENCH_TESTING_PIPE_CHILD_H_
