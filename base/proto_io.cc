#include "base/proto_io.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace kbench {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

// Blocks SIGPIPE in the calling thread for its lifetime. On destruction,
// consumes a SIGPIPE raised while it was blocked (unless one was already
// pending before, which then belongs to someone else) and restores the mask.
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigemptyset(&pipe_set_);
    sigaddset(&pipe_set_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set_, &old_set_);
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
  }
  ~ScopedSigpipeBlock() {
    if (got_epipe_ && !was_pending_) {
      const struct timespec zero = {0, 0};
      while (sigtimedwait(&pipe_set_, nullptr, &zero) == -1 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_set_, nullptr);
  }
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

  void NoteEpipe() { got_epipe_ = true; }

 private:
  sigset_t pipe_set_;
  sigset_t old_set_;
  bool was_pending_ = false;
  bool got_epipe_ = false;
};

// Writes all of [data, data+size) to a socket with MSG_NOSIGNAL.
absl::Status SendAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(
          absl::StrCat("runner pipe closed: send on fd ", fd,
                       " failed: ", ErrnoText(errno)));
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// Writes all of [data, data+size) to a non-socket descriptor with SIGPIPE
// blocked in this thread.
absl::Status WriteAll(int fd, const char* data, size_t size) {
  ScopedSigpipeBlock block;
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      if (err == EPIPE) block.NoteEpipe();
      return absl::UnavailableError(absl::StrCat(
          "runner pipe closed: write on fd ", fd, " failed: ", ErrnoText(err)));
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

enum class ReadResult { kOk, kEof, kError };

// Reads exactly `size` bytes; on kEof, *got holds how many arrived.
ReadResult ReadFull(int fd, char* data, size_t size, size_t* got, int* err) {
  *got = 0;
  while (*got < size) {
    ssize_t n = read(fd, data + *got, size - *got);
    if (n < 0) {
      if (errno == EINTR) continue;
      *err = errno;
      return ReadResult::kError;
    }
    if (n == 0) return ReadResult::kEof;
    *got += static_cast<size_t>(n);
  }
  return ReadResult::kOk;
}

}  // namespace

absl::Status WriteMessage(int fd, const google::protobuf::MessageLite& msg) {
  const size_t size = msg.ByteSizeLong();
  if (size > kMaxMessageBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("message ", msg.GetTypeName(), " is ", size,
                     " bytes; the runner protocol allows at most ",
                     kMaxMessageBytes, " bytes (512 MiB) per message"));
  }
  std::string frame(4 + size, '\0');
  const uint32_t len = static_cast<uint32_t>(size);
  frame[0] = static_cast<char>(len & 0xff);
  frame[1] = static_cast<char>((len >> 8) & 0xff);
  frame[2] = static_cast<char>((len >> 16) & 0xff);
  frame[3] = static_cast<char>((len >> 24) & 0xff);
  if (size > 0 && !msg.SerializeToArray(&frame[4], static_cast<int>(size))) {
    return absl::InvalidArgumentError(
        absl::StrCat("could not serialize ", msg.GetTypeName(),
                     " (missing required fields?)"));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    return absl::UnavailableError(absl::StrCat(
        "runner pipe closed: fd ", fd, " is not open: ", ErrnoText(errno)));
  }
  if (S_ISSOCK(st.st_mode)) return SendAll(fd, frame.data(), frame.size());
  return WriteAll(fd, frame.data(), frame.size());
}

absl::Status ReadMessage(int fd, google::protobuf::MessageLite* msg) {
  unsigned char header[4];
  size_t got = 0;
  int err = 0;
  switch (ReadFull(fd, reinterpret_cast<char*>(header), 4, &got, &err)) {
    case ReadResult::kOk:
      break;
    case ReadResult::kEof:
      if (got == 0) return absl::OutOfRangeError("end of stream");
      return absl::DataLossError(absl::StrCat(
          "stream on fd ", fd, " ended inside a length header (", got,
          " of 4 bytes); the peer exited or closed mid-message"));
    case ReadResult::kError:
      return absl::UnavailableError(absl::StrCat(
          "runner pipe closed: read on fd ", fd, " failed: ", ErrnoText(err)));
  }
  const uint32_t len = static_cast<uint32_t>(header[0]) |
                       (static_cast<uint32_t>(header[1]) << 8) |
                       (static_cast<uint32_t>(header[2]) << 16) |
                       (static_cast<uint32_t>(header[3]) << 24);
  if (len > kMaxMessageBytes) {
    return absl::DataLossError(absl::StrCat(
        "frame on fd ", fd, " announces ", len,
        " bytes, over the 512 MiB limit of the runner protocol; the stream "
        "is corrupt or not speaking the protocol"));
  }
  std::string body(len, '\0');
  if (len > 0) {
    switch (ReadFull(fd, &body[0], len, &got, &err)) {
      case ReadResult::kOk:
        break;
      case ReadResult::kEof:
        return absl::DataLossError(absl::StrCat(
            "stream on fd ", fd, " ended inside a message (", got, " of ", len,
            " bytes); the peer exited or closed mid-message"));
      case ReadResult::kError:
        return absl::UnavailableError(
            absl::StrCat("runner pipe closed: read on fd ", fd,
                         " failed: ", ErrnoText(err)));
    }
  }
  if (!msg->ParseFromString(body)) {
    return absl::DataLossError(absl::StrCat(
        "could not parse a ", len, "-byte frame on fd ", fd, " as ",
        msg->GetTypeName(), "; the peer is not speaking the runner protocol"));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> WaitReadable(int fd, int timeout_ms) {
  const absl::Time deadline =
      timeout_ms < 0 ? absl::InfiniteFuture()
                     : absl::Now() + absl::Milliseconds(timeout_ms);
  while (true) {
    int wait_ms = -1;
    if (timeout_ms >= 0) {
      const absl::Duration left = deadline - absl::Now();
      wait_ms = left <= absl::ZeroDuration()
                    ? 0
                    : static_cast<int>(absl::ToInt64Milliseconds(
                          left + absl::Milliseconds(1) - absl::Nanoseconds(1)));
    }
    struct pollfd pfd = {fd, POLLIN, 0};
    const int n = poll(&pfd, 1, wait_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(
          absl::StrCat("poll on fd ", fd, " failed: ", ErrnoText(errno)));
    }
    if (n == 0) return false;
    if (pfd.revents & POLLNVAL) {
      return absl::InvalidArgumentError(
          absl::StrCat("fd ", fd, " is not open; cannot wait on it"));
    }
    return (pfd.revents & (POLLIN | POLLHUP | POLLERR)) != 0;
  }
}

}  // namespace kbench
