#include "testing/pipe_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/process/spawn.h"

namespace kbench::testing {

absl::StatusOr<std::unique_ptr<PipeChild>> PipeChild::Start(
    const std::vector<std::string>& argv,
    const std::map<std::string, std::string>& env) {
  signal(SIGPIPE, SIG_IGN);
  auto c = std::unique_ptr<PipeChild>(new PipeChild());
  c->dir_ = std::make_unique<TempDir>();
  c->err_path_ = c->dir_->path() + "/stderr";
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    close(in_pipe[0]);
    close(in_pipe[1]);
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  const int err = open(c->err_path_.c_str(),
                       O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  SpawnOptions spawn;
  spawn.argv = argv;
  spawn.env = env;
  spawn.fds = {
      {0, in_pipe[0]}, {1, out_pipe[1]}, {2, err < 0 ? kDevNull : err}};
  spawn.new_process_group = true;
  // SpawnProcess also gives the child back the default SIGPIPE.
  absl::StatusOr<pid_t> pid = SpawnProcess(spawn);
  close(in_pipe[0]);
  close(out_pipe[1]);
  if (err >= 0) close(err);
  if (!pid.ok()) {
    close(in_pipe[1]);
    close(out_pipe[0]);
    return pid.status();
  }
  c->pid_ = *pid;
  c->stdin_fd_ = in_pipe[1];
  c->stdout_fd_ = out_pipe[0];
  return c;
}

PipeChild::~PipeChild() {
  CloseStdin();
  Kill();
  if (stdout_fd_ >= 0) close(stdout_fd_);
}

absl::Status PipeChild::WriteLine(const std::string& line) {
  if (stdin_fd_ < 0) {
    return absl::FailedPreconditionError("the child's stdin is closed");
  }
  const std::string data = line + "\n";
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(stdin_fd_, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::UnavailableError(
          absl::StrCat("writing to the child's stdin: ", std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

void PipeChild::CloseStdin() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  stdin_fd_ = -1;
}

bool PipeChild::Fill(absl::Duration timeout) {
  if (eof_) return false;
  pollfd p = {stdout_fd_, POLLIN, 0};
  const int ms = static_cast<int>(
      std::max<int64_t>(0, absl::ToInt64Milliseconds(timeout)));
  const int ready = poll(&p, 1, ms);
  if (ready == 0 || (ready < 0 && errno == EINTR)) return true;
  if (ready < 0) {
    eof_ = true;
    return false;
  }
  char chunk[65536];
  const ssize_t n = read(stdout_fd_, chunk, sizeof(chunk));
  if (n < 0 && errno == EINTR) return true;
  if (n <= 0) {
    eof_ = true;
    return false;
  }
  buffer_.append(chunk, static_cast<size_t>(n));
  return true;
}

absl::StatusOr<std::string> PipeChild::ReadLine(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    const size_t newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      lines_.push_back(line);
      return line;
    }
    if (eof_) {
      if (!buffer_.empty()) lines_.push_back(buffer_);
      buffer_.clear();
      return absl::OutOfRangeError("end of the child's stdout");
    }
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError(absl::StrCat(
          "no line from the child within ", absl::FormatDuration(timeout)));
    }
    Fill(left);
  }
}

std::string PipeChild::ReadToEnd(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!eof_ && absl::Now() < deadline) Fill(deadline - absl::Now());
  std::string rest = buffer_;
  std::istringstream in(buffer_);
  for (std::string line; std::getline(in, line);) lines_.push_back(line);
  buffer_.clear();
  return rest;
}

int PipeChild::Wait(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!reaped_) {
    if (waitpid(pid_, &status_, WNOHANG) == pid_) {
      reaped_ = true;
      break;
    }
    if (absl::Now() >= deadline) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  if (!reaped_ || !WIFEXITED(status_)) return -1;
  return WEXITSTATUS(status_);
}

void PipeChild::Kill() {
  if (pid_ <= 0 || reaped_) return;
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
  waitpid(pid_, &status_, 0);
  reaped_ = true;
}

std::string PipeChild::Stderr() const {
  std::ifstream in(err_path_, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace kbench::testing
