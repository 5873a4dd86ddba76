// HttpConnectionServer: an httplib::Server (cpp-httplib 0.11.4) whose
// connection loop is ours (it overrides process_and_close_socket and calls
// httplib's process_request), for three things httplib 0.11.4 cannot do:
//   * the request's whole head and body must arrive within request_timeout
//     (10 s) of its first byte, whatever the pace: httplib only times single
//     reads (5 s each), so one byte every 4 s (a slowloris) held its thread
//     forever;
//   * a connection waits keep_alive (2 s) at most for its next request,
//     including the first, then it is closed;
//   * the handler can learn its connection's socket (CurrentHttpConnectionFd),
//     so that a tool call can notice its client hanging up (PeerHungUp) and
//     cancel the job. httplib 0.11.4 exposes the socket neither on Request
//     nor to a TaskQueue (the task is an opaque std::function).
// An error reply (status >= 400) closes the connection (with
// "Connection: close"): the body of a refused request may be unread, and
// must not be parsed as the next request.
//
// So a connection can hold a task-queue thread (server/http/http_task_queue.h)
// only request_timeout + keep_alive before it sends a whole request.
//
// Ownership: HttpServer owns it; each connection's socket is owned (and
// closed) by the loop serving it.
// Thread safety: as httplib::Server; connections are served concurrently on
// the task queue's threads, each on one thread until it is closed.
#ifndef KBENCH_SERVER_HTTP_HTTP_CONNECTION_SERVER_H_
#define KBENCH_SERVER_HTTP_HTTP_CONNECTION_SERVER_H_

#include <httplib.h>

#include "absl/time/time.h"

namespace kbench {

// The socket of the connection the calling thread is serving inside an
// HttpConnectionServer handler, or -1 elsewhere. Valid until the handler
// returns.
int CurrentHttpConnectionFd();
// True when the peer of `fd` has closed or reset the connection (FIN, RST,
// or a socket error). A client that half-closes (shutdown(SHUT_WR)) after
// its request counts as gone. Never blocks.
bool PeerHungUp(int fd);

class HttpConnectionServer : public httplib::Server {
 public:
  struct Options {
    // Longest wait for the first byte of each request on a connection.
    absl::Duration keep_alive = absl::Seconds(2);
    // Longest wait of any single read or write.
    absl::Duration io_timeout = absl::Seconds(5);
    // A request's head and body must arrive within this long of its first
    // byte (kernel sources are at most 256 KiB: milliseconds on loopback),
    // and its reply must be written within as long once started.
    absl::Duration request_timeout = absl::Seconds(10);
    // Requests served on one connection before it is closed.
    int max_requests_per_connection = 100;
  };

  explicit HttpConnectionServer(const Options& options);

  // Call after binding: httplib listens with a backlog of 5, so a burst of
  // clients (64 agents connecting at once) overflowed the accept queue and
  // waited for TCP's 1 s retransmission. False when listen() fails.
  bool SetListenBacklog(int backlog);

 private:
  // Called by httplib on a task-queue thread for each accepted socket.
  bool process_and_close_socket(socket_t sock) override;

  const Options options_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_HTTP_HTTP_CONNECTION_SERVER_H_
