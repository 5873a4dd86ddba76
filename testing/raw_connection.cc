#include "testing/raw_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace kbench::testing {

RawConnection::RawConnection(int port) {
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) {
    status_ = absl::UnavailableError(
        absl::StrCat("cannot create a socket: ", std::strerror(errno)));
    return;
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    status_ = absl::UnavailableError(absl::StrCat(
        "cannot connect to 127.0.0.1:", port, ": ", std::strerror(errno),
        "; is the server under test listening on that port?"));
    Close();
  }
}

RawConnection::~RawConnection() { Close(); }

bool RawConnection::Send(const std::string& data) {
  size_t off = 0;
  while (fd_ >= 0 && off < data.size()) {
    const ssize_t n =
        send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return fd_ >= 0;
}

std::string RawConnection::ReadAll(absl::Duration timeout) {
  std::string out;
  const absl::Time deadline = absl::Now() + timeout;
  while (Receive(&out, deadline) > 0) {
  }
  return out;
}

std::string RawConnection::ReadResponse(absl::Duration timeout) {
  std::string out;
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    const size_t head = out.find("\r\n\r\n");
    if (head != std::string::npos) {
      const size_t at = out.find("Content-Length: ");
      size_t length = 0;
      if (at != std::string::npos && at < head) {
        length = std::stoul(out.substr(at + 16));
      }
      if (out.size() >= head + 4 + length) return out;
    }
    if (Receive(&out, deadline) <= 0) return out;
  }
}

bool RawConnection::WaitClosed(absl::Time deadline) {
  std::string ignored;
  while (true) {
    const int r = Receive(&ignored, deadline);
    if (r == 0) return true;
    if (r < 0) return false;
  }
}

bool RawConnection::HasReply() const {
  pollfd p{fd_, POLLIN, 0};
  return fd_ >= 0 && poll(&p, 1, 0) > 0;
}

void RawConnection::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

int RawConnection::Receive(std::string* out, absl::Time deadline) {
  while (fd_ >= 0) {
    const int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (ms <= 0) return -1;
    pollfd p{fd_, POLLIN, 0};
    const int r = poll(&p, 1, static_cast<int>(ms));
    if (r == 0) return -1;
    if (r < 0) {
      if (errno == EINTR) continue;
      return 0;
    }
    char buf[4096];
    const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    out->append(buf, static_cast<size_t>(n));
    return 1;
  }
  return 0;
}

}  // namespace kbench::testing
