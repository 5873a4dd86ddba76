#include "server/http/http_connection_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/time/clock.h"

namespace kbench {

namespace {

thread_local int current_fd = -1;
// Set by the post-routing handler: close the connection after this reply.
thread_local bool close_after_reply = false;

int Millis(absl::Duration d) {
  return static_cast<int>(
      std::clamp<int64_t>(absl::ToInt64Milliseconds(d), 0, 1 << 30));
}

// poll() for `events`, retrying on EINTR; >0 ready, 0 timeout, <0 error.
int PollFor(int fd, short events, absl::Duration timeout) {
  pollfd p{fd, events, 0};
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    const int r = poll(&p, 1, Millis(deadline - absl::Now()));
    if (r < 0 && errno == EINTR) continue;
    if (r > 0 && (p.revents & (POLLERR | POLLNVAL)) != 0 &&
        (p.revents & events) == 0) {
      return -1;
    }
    return r;
  }
}

void Address(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr;
  socklen_t len = sizeof(addr);
  const int r = peer
                    ? getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len)
                    : getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  if (r != 0) return;
  char host[NI_MAXHOST], serv[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof(host),
                  serv, sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = atoi(serv);
  }
}

// One connection's byte stream for httplib's request parser and writer:
// reads buffered, each bounded by io_timeout and, for the request being
// read, by its deadline.
class ConnectionStream : public httplib::Stream {
 public:
  ConnectionStream(int fd, const HttpConnectionServer::Options& options,
                   const std::atomic<socket_t>& server_socket)
      : fd_(fd), options_(options), server_socket_(server_socket) {}

  // A new request starts: its head and body are due by now + timeout, and
  // so is its reply once it starts.
  void StartRequest() {
    read_deadline_ = absl::Now() + options_.request_timeout;
    write_deadline_ = absl::InfiniteFuture();
  }
  bool has_buffered() const { return off_ < size_; }

  // Waits in slices, to notice the server stopping.
  bool is_readable() const override {
    if (has_buffered()) return true;
    const absl::Time until =
        std::min(absl::Now() + options_.io_timeout, read_deadline_);
    while (server_socket_ != INVALID_SOCKET) {
      const absl::Duration left = until - absl::Now();
      if (left <= absl::ZeroDuration()) return false;
      const int r =
          PollFor(fd_, POLLIN, std::min(left, absl::Milliseconds(100)));
      if (r != 0) return r > 0;
    }
    return false;
  }
  bool is_writable() const override {
    const absl::Duration left =
        std::min(options_.io_timeout, write_deadline_ - absl::Now());
    if (left <= absl::ZeroDuration()) return false;
    if (PollFor(fd_, POLLOUT, left) <= 0) return false;
    return !PeerHungUp(fd_);
  }
  ssize_t read(char* ptr, size_t n) override {
    if (n == 0) return 0;
    if (!has_buffered()) {
      if (!is_readable()) return -1;
      ssize_t got;
      do {
        got = recv(fd_, buf_, sizeof(buf_), MSG_DONTWAIT);
      } while (got < 0 && errno == EINTR);
      if (got <= 0) return got;
      off_ = 0;
      size_ = static_cast<size_t>(got);
    }
    const size_t k = std::min(n, size_ - off_);
    memcpy(ptr, buf_ + off_, k);
    off_ += k;
    return static_cast<ssize_t>(k);
  }
  ssize_t write(const char* ptr, size_t n) override {
    if (write_deadline_ == absl::InfiniteFuture()) {
      write_deadline_ = absl::Now() + options_.request_timeout;
    }
    if (!is_writable()) return -1;
    ssize_t sent;
    do {
      sent = send(fd_, ptr, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (sent < 0 && errno == EINTR);
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    return sent;
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    Address(fd_, /*peer=*/true, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    Address(fd_, /*peer=*/false, ip, port);
  }
  socket_t socket() const override { return fd_; }

 private:
  const int fd_;
  const HttpConnectionServer::Options& options_;
  const std::atomic<socket_t>& server_socket_;
  absl::Time read_deadline_ = absl::InfinitePast();
  absl::Time write_deadline_ = absl::InfiniteFuture();
  char buf_[16 << 10];
  size_t off_ = 0, size_ = 0;
};

}  // namespace

int CurrentHttpConnectionFd() { return current_fd; }

bool PeerHungUp(int fd) {
  if (fd < 0) return false;
  pollfd p{fd, static_cast<short>(POLLIN | POLLRDHUP), 0};
  int r;
  do {
    r = poll(&p, 1, 0);
  } while (r < 0 && errno == EINTR);
  if (r <= 0) return r < 0;
  if ((p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0) {
    return true;
  }
  // Readable without RDHUP: pipelined bytes of a next request, so alive.
  return false;
}

HttpConnectionServer::HttpConnectionServer(const Options& options)
    : options_(options) {
  // What httplib puts in the Keep-Alive reply header; the loop below
  // enforces them.
  set_keep_alive_timeout(std::max<time_t>(
      1, static_cast<time_t>(absl::ToInt64Seconds(options.keep_alive))));
  set_keep_alive_max_count(
      static_cast<size_t>(std::max(1, options.max_requests_per_connection)));
  // Runs on every reply, the error handler's included, before its headers
  // are written.
  set_post_routing_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.status >= 400 || res.get_header_value("Connection") == "close") {
      res.set_header("Connection", "close");
      close_after_reply = true;
    }
  });
}

bool HttpConnectionServer::SetListenBacklog(int backlog) {
  const socket_t sock = svr_sock_;
  return sock != INVALID_SOCKET && ::listen(sock, backlog) == 0;
}

bool HttpConnectionServer::process_and_close_socket(socket_t sock) {
  current_fd = sock;
  ConnectionStream stream(sock, options_, svr_sock_);
  bool ok = true;
  for (int served = 0; served < options_.max_requests_per_connection;
       ++served) {
    // Wait for the next request in slices, to notice the server stopping.
    bool readable = stream.has_buffered();
    const absl::Time idle_deadline = absl::Now() + options_.keep_alive;
    while (!readable && svr_sock_ != INVALID_SOCKET &&
           absl::Now() < idle_deadline) {
      const int r = PollFor(
          sock, POLLIN,
          std::min(absl::Milliseconds(100), idle_deadline - absl::Now()));
      if (r < 0) break;
      readable = r > 0;
    }
    if (!readable || svr_sock_ == INVALID_SOCKET) break;
    stream.StartRequest();
    close_after_reply = false;
    bool closed = false;
    const bool last = served + 1 == options_.max_requests_per_connection;
    ok = process_request(stream, last, closed, nullptr);
    if (!ok || closed || close_after_reply) break;
  }
  current_fd = -1;
  close_after_reply = false;
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

}  // namespace kbench
