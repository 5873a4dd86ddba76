// RawConnection: a plain TCP connection to 127.0.0.1, for the bytes that
// httplib's client cannot send: raw header bytes, partial requests,
// pipelined requests, hanging up mid-call. Used by the HTTP tests that play
// a hostile or broken client against kbd's HTTP port.
//
// Connecting never fails a test by itself (a test that reconnects under load
// may expect refusals): check ok() or status() after construction.
//
// Ownership: owns its socket, closed by Close() or the destructor.
// Thread safety: one thread may Send() while another reads (ReadAll,
// ReadResponse, WaitClosed, HasReply); Close() and destruction must not race
// with any other call.
#ifndef KBENCH_TESTING_RAW_CONNECTION_H_
#define KBENCH_TESTING_RAW_CONNECTION_H_

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace kbench::testing {

class RawConnection {
 public:
  // Connects to 127.0.0.1:`port`; see ok() and status() for the outcome.
  explicit RawConnection(int port);
  ~RawConnection();  // Closes the socket.
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  // True while connected (not refused, not closed).
  bool ok() const { return fd_ >= 0; }
  // Why the connection could not be made; OK if it was (even if closed
  // since).
  const absl::Status& status() const { return status_; }

  // Sends all of `data`; false if the connection is closed or the peer is
  // gone (no SIGPIPE).
  bool Send(const std::string& data);
  // Everything received until the peer closes or `timeout` passes.
  std::string ReadAll(absl::Duration timeout);
  // One response: its head, then Content-Length bytes of body (or what came
  // before the peer closed or `timeout` passed).
  std::string ReadResponse(absl::Duration timeout);
  // True once the peer has closed (or reset) the connection, before
  // `deadline`.
  bool WaitClosed(absl::Time deadline);
  // True when bytes (or the peer's close) are waiting to be read.
  bool HasReply() const;
  void Close();

 private:
  // >0 bytes appended to `out`, 0 peer closed (or reset), -1 timed out.
  int Receive(std::string* out, absl::Time deadline);

  int fd_ = -1;
  absl::Status status_;
};

}  // namespace kbench::testing

#endif  // KBENCH_TESTING_RAW_CONNECTION_H_
