#include "worker/runner_process.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/memory/memory.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/proto_io.h"
#include "base/status_macros.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

constexpr absl::Duration kPollSlice = absl::Milliseconds(50);

// The last `max_lines` non-empty lines of `text`, at most `max_bytes`, joined
// with " | ".
std::string LastLines(absl::string_view text, size_t max_lines,
                      size_t max_bytes) {
  std::vector<absl::string_view> lines =
      absl::StrSplit(text, '\n', absl::SkipWhitespace());
  if (lines.size() > max_lines) {
    lines.erase(lines.begin(), lines.end() - max_lines);
  }
  std::string out = absl::StrJoin(lines, " | ");
  if (out.size() > max_bytes) out = "..." + out.substr(out.size() - max_bytes);
  return out;
}

// How long one send() of a job may make no progress: a runner that stops
// reading its socket cannot hold Run for long (at most the budget, at most
// kill_grace, at least 100 ms).
struct timeval SendTimeout(absl::Duration budget, absl::Duration grace) {
  return absl::ToTimeval(
      std::max(std::min(budget, grace), absl::Milliseconds(100)));
}

}  // namespace

RunnerProcess::RunnerProcess(const Options& options)
    : options_(options), child_(options.kill_grace) {}

absl::StatusOr<std::unique_ptr<RunnerProcess>> RunnerProcess::Start(
    const Options& options) {
  if (options.runner_path.empty()) {
    return absl::InvalidArgumentError(
        "RunnerProcess::Options::runner_path is empty; pass the path of the "
        "kbrunner executable");
  }
  auto proc = absl::WrapUnique(new RunnerProcess(options));
  RETURN_IF_ERROR(proc->Spawn());
  RETURN_IF_ERROR(proc->AwaitHello());
  return proc;
}

absl::Status RunnerProcess::Spawn() {
  absl::MutexLock lock(&mu_);
  const absl::Status spawned =
      child_.Spawn(options_.runner_path, options_.args, options_.env, &sock_fd_,
                   &stdout_fd_);
  pid_ = child_.pid();
  return spawned;
}

absl::Status RunnerProcess::AwaitHello() {
  v1::RunnerResponse resp;
  std::string error;
  const Next next = NextResponse(absl::Now() + options_.hello_timeout, nullptr,
                                 &resp, &error);
  DrainStdout(/*all=*/false);
  std::string tail = LastLines(output_, 5, 1000);
  if (!tail.empty()) tail = absl::StrCat("; its last output: ", tail);
  const std::string where =
      absl::StrCat(" (runner '", options_.runner_path, "', pid ", pid_,
                   "; its stderr is in the worker's log)");
  switch (next) {
    case Next::kMessage:
      break;
    case Next::kDeadline:
    case Next::kCancelled:
      KillAndDescribe();
      return absl::DeadlineExceededError(
          absl::StrCat("kbrunner did not say hello within ",
                       absl::FormatDuration(options_.hello_timeout),
                       " and was killed", tail, where));
    case Next::kEof: {
      const std::string end = ReapAfterEof();
      return absl::FailedPreconditionError(
          absl::StrCat("kbrunner ", end, " before saying hello", tail, where));
    }
    case Next::kBadFrame:
      KillAndDescribe();
      return absl::FailedPreconditionError(absl::StrCat(
          "kbrunner's first message was malformed: ", error, tail, where));
  }
  if (resp.unhealthy()) {
    KillAndDescribe();
    std::string why = resp.result().error().message();
    if (why.empty()) why = resp.result().correctness().message();
    if (why.empty()) why = "no reason given";
    return absl::FailedPreconditionError(absl::StrCat(
        "kbrunner reported its GPU unusable at start-up: ", why, tail, where));
  }
  if (!resp.has_hello()) {
    KillAndDescribe();
    return absl::FailedPreconditionError(absl::StrCat(
        "kbrunner's first message was not a hello (message case ",
        resp.msg_case(), "); it does not speak this worker's protocol", where));
  }
  hello_ = resp.hello();
  if (!output_.empty()) {
    spdlog::info("kbrunner pid {} wrote at start-up: {}", pid_,
                 LastLines(output_, 5, 1000));
  }
  TakeOutput();
  spdlog::info("kbrunner pid {} ready: {} ({}), start-up {:.0f} ms", pid_,
               hello_.spec().name(), hello_.spec().arch(), hello_.startup_ms());
  return absl::OkStatus();
}

bool RunnerProcess::DecodeFrame(v1::RunnerResponse* resp, std::string* error,
                                bool* got) {
  *got = false;
  if (rx_buf_.size() < 4) return true;
  const auto* b = reinterpret_cast<const unsigned char*>(rx_buf_.data());
  const uint32_t len =
      static_cast<uint32_t>(b[0]) | (static_cast<uint32_t>(b[1]) << 8) |
      (static_cast<uint32_t>(b[2]) << 16) | (static_cast<uint32_t>(b[3]) << 24);
  if (len > kMaxMessageBytes) {
    *error = absl::StrCat("kbrunner announced a ", len,
                          "-byte message, over the 512 MiB protocol limit");
    return false;
  }
  if (rx_buf_.size() < 4 + static_cast<size_t>(len)) return true;
  resp->Clear();
  if (!resp->ParseFromArray(rx_buf_.data() + 4, static_cast<int>(len))) {
    *error = absl::StrCat("could not parse a ", len,
                          "-byte message from kbrunner as RunnerResponse");
    return false;
  }
  rx_buf_.erase(0, 4 + static_cast<size_t>(len));
  *got = true;
  return true;
}

RunnerProcess::Next RunnerProcess::NextResponse(absl::Time deadline,
                                                const std::atomic<bool>* cancel,
                                                v1::RunnerResponse* resp,
                                                std::string* error) {
  while (true) {
    bool got = false;
    if (!DecodeFrame(resp, error, &got)) return Next::kBadFrame;
    if (got) return Next::kMessage;
    if (kill_requested_.load() || (cancel != nullptr && cancel->load())) {
      return Next::kCancelled;
    }
    if (sock_eof_) {
      *error = sock_error_;
      if (!rx_buf_.empty()) {
        if (!error->empty()) *error += "; ";
        absl::StrAppend(error, "the stream ended inside a message (",
                        rx_buf_.size(), " bytes received)");
      }
      return Next::kEof;
    }
    const absl::Time now = absl::Now();
    if (now >= deadline) return Next::kDeadline;
    const absl::Duration slice = std::min(kPollSlice, deadline - now);
    const int timeout_ms = static_cast<int>(std::max<int64_t>(
        1,
        absl::ToInt64Milliseconds(absl::Ceil(slice, absl::Milliseconds(1)))));
    struct pollfd fds[2] = {{sock_fd_, POLLIN, 0}, {stdout_fd_, POLLIN, 0}};
    const nfds_t nfds = stdout_eof_ ? 1 : 2;
    const int n = poll(fds, nfds, timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      sock_error_ = absl::StrCat("poll failed: ", strerror(errno));
      sock_eof_ = true;
      continue;
    }
    if (nfds == 2 && fds[1].revents != 0) DrainStdout(/*all=*/false);
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    char buf[65536];
    for (int i = 0; i < 16; ++i) {
      const ssize_t k = recv(sock_fd_, buf, sizeof(buf), MSG_DONTWAIT);
      if (k > 0) {
        rx_buf_.append(buf, static_cast<size_t>(k));
        continue;
      }
      if (k < 0 && errno == EINTR) continue;
      if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (k < 0) sock_error_ = absl::StrCat("read failed: ", strerror(errno));
      sock_eof_ = true;
      break;
    }
  }
}

void RunnerProcess::DrainStdout(bool all) {
  if (stdout_fd_ < 0 || stdout_eof_) return;
  char buf[16384];
  for (int i = 0; all || i < 64; ++i) {
    const ssize_t n = read(stdout_fd_, buf, sizeof(buf));
    if (n > 0) {
      AppendOutput(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      stdout_eof_ = true;
      return;
    } else if (errno != EINTR) {
      return;  // EAGAIN: nothing more for now.
    }
  }
}

void RunnerProcess::AppendOutput(const char* data, size_t n) {
  const size_t room = options_.max_output_bytes > output_.size()
                          ? options_.max_output_bytes - output_.size()
                          : 0;
  const size_t keep = std::min(room, n);
  output_.append(data, keep);
  output_dropped_ += n - keep;
}

std::string RunnerProcess::TakeOutput() {
  std::string out = std::move(output_);
  output_.clear();
  if (output_dropped_ > 0) {
    absl::StrAppend(&out, "\n[... ", output_dropped_, " bytes truncated]");
  }
  output_dropped_ = 0;
  return out;
}

RunnerProcess::Outcome RunnerProcess::Run(
    const v1::RunnerJob& job, absl::Duration budget,
    const std::function<void(const std::string&)>& on_progress,
    const std::atomic<bool>* cancel) {
  using Kind = Outcome::Kind;
  const absl::Time start = absl::Now();
  Outcome out;
  auto finish = [&](Kind kind, std::string detail) {
    out.kind = kind;
    out.detail = std::move(detail);
    // A dead runner's pipe is finite: read it to the end. A live one gets a
    // bounded read, so a runner that keeps printing cannot hold Run here.
    DrainStdout(/*all=*/kind != Kind::kResult || out.unhealthy);
    out.output = TakeOutput();
    out.elapsed = absl::Now() - start;
    if (kind != Kind::kResult || out.unhealthy) {
      absl::MutexLock lock(&mu_);
      usable_ = false;
    }
    return std::move(out);
  };
  const std::string who = absl::StrCat("kbrunner (pid ", pid_, ")");
  if (!alive()) {
    const std::string end = KillAndDescribe();
    return finish(Kind::kDied, absl::StrCat(who, " is not running (it ", end,
                                            "); start a new runner"));
  }
  DrainStdout(/*all=*/false);
  if (!output_.empty() || output_dropped_ > 0) {
    spdlog::info("{} wrote between jobs: {}", who, LastLines(output_, 5, 1000));
  }
  TakeOutput();

  const struct timeval tv = SendTimeout(budget, options_.kill_grace);
  setsockopt(sock_fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  v1::RunnerRequest request;
  *request.mutable_job() = job;
  const absl::Status sent = WriteMessage(sock_fd_, request);
  if (!sent.ok()) {
    const std::string end = ReapAfterEof();
    return finish(Kind::kDied,
                  absl::StrCat("could not send job ", job.job_id(), " to ", who,
                               ": ", sent.message(), "; the runner ", end));
  }

  const absl::Time deadline = start + budget;
  while (true) {
    v1::RunnerResponse resp;
    std::string error;
    switch (NextResponse(deadline, cancel, &resp, &error)) {
      case Next::kMessage:
        if (resp.has_progress()) {
          out.last_progress = resp.progress().detail();
          if (on_progress) on_progress(out.last_progress);
          continue;
        }
        if (resp.has_result()) {
          out.result = std::move(*resp.mutable_result());
          out.unhealthy = resp.unhealthy();
          if (!out.unhealthy) return finish(Kind::kResult, "result received");
          KillAndDescribe();
          return finish(Kind::kResult,
                        absl::StrCat(who,
                                     " reported its CUDA context unusable "
                                     "and was replaced (killed)"));
        }
        KillAndDescribe();
        return finish(Kind::kProtocolError,
                      absl::StrCat(who, " sent an unexpected message (case ",
                                   resp.msg_case(), ") during job ",
                                   job.job_id(), "; killed it"));
      case Next::kDeadline: {
        KillAndDescribe();
        return finish(
            Kind::kTimedOut,
            absl::StrCat(who, " ran past its budget of ",
                         absl::FormatDuration(budget), " and was killed",
                         out.last_progress.empty()
                             ? " before reporting progress"
                             : absl::StrCat("; last progress: \"",
                                            out.last_progress, "\"")));
      }
      case Next::kCancelled: {
        const bool by_kill = kill_requested_.load();
        KillAndDescribe();
        return finish(
            Kind::kCancelled,
            by_kill ? absl::StrCat(who, " was killed by Kill() during job ",
                                   job.job_id())
                    : absl::StrCat("job ", job.job_id(), " was cancelled; ",
                                   who, " was killed"));
      }
      case Next::kEof: {
        const std::string end = ReapAfterEof();
        return finish(
            Kind::kDied,
            absl::StrCat(who, " ", end, " while running job ", job.job_id(),
                         error.empty() ? "" : absl::StrCat(" (", error, ")"),
                         out.last_progress.empty()
                             ? ""
                             : absl::StrCat("; last progress: \"",
                                            out.last_progress, "\"")));
      }
      case Next::kBadFrame:
        KillAndDescribe();
        return finish(Kind::kProtocolError,
                      absl::StrCat(error, " during job ", job.job_id(),
                                   "; killed ", who));
    }
  }
}

bool RunnerProcess::alive() {
  absl::MutexLock lock(&mu_);
  if (child_.gone() || !usable_) return false;
  TryReapLocked();
  return !child_.reaped();
}

void RunnerProcess::TryReapLocked() {
  child_.TryReap();
  if (child_.gone()) usable_ = false;
}

void RunnerProcess::KillLocked() {
  usable_ = false;
  child_.Kill();
}

std::string RunnerProcess::EndDescription() {
  absl::MutexLock lock(&mu_);
  return child_.EndDescription();
}

std::string RunnerProcess::KillAndDescribe() {
  {
    absl::MutexLock lock(&mu_);
    KillLocked();
  }
  return EndDescription();
}

std::string RunnerProcess::ReapAfterEof() {
  const absl::Time until = absl::Now() + options_.kill_grace;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      TryReapLocked();
      if (child_.gone()) break;
    }
    if (absl::Now() >= until) {
      spdlog::warn(
          "kbrunner pid {} closed its socket but did not exit "
          "within {}; killing it",
          pid_, absl::FormatDuration(options_.kill_grace));
      break;
    }
    absl::SleepFor(absl::Milliseconds(2));
  }
  return KillAndDescribe();
}

void RunnerProcess::Kill() {
  kill_requested_.store(true);
  absl::MutexLock lock(&mu_);
  KillLocked();
}

RunnerProcess::~RunnerProcess() {
  {
    absl::MutexLock lock(&mu_);
    KillLocked();
  }
  for (int fd : {sock_fd_, stdout_fd_}) {
    if (fd >= 0) close(fd);
  }
}

}  // namespace kbench
