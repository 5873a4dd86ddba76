// Length-prefixed protobuf framing on a file descriptor (a socket or a
// pipe), used by kbworker and its child kbrunner on the runner's fd 3.
//
// Wire format: a 4-byte little-endian length, then that many bytes of the
// serialized message. Messages over kMaxMessageBytes are refused on both
// sides.
//
// SIGPIPE: writing to a socket or pipe whose reader is gone never raises
// SIGPIPE in the process. Sockets are written with send(MSG_NOSIGNAL); for
// other descriptors (pipes) WriteMessage blocks SIGPIPE in the calling thread
// for the duration of the write and consumes a SIGPIPE that the write itself
// generated, so the process-wide disposition is left alone. Either way the
// failure comes back as UnavailableError.
//
// Thread safety: the functions keep no state. Concurrent writers (or
// readers) on the same descriptor must serialize themselves; one reader and
// one writer on the two directions of a socket may run concurrently.
#ifndef KBENCH_BASE_PROTO_IO_H_
#define KBENCH_BASE_PROTO_IO_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message_lite.h"

namespace kbench {

// Largest message accepted by WriteMessage and ReadMessage: 512 MiB.
inline constexpr uint32_t kMaxMessageBytes = 512u << 20;

// Writes `msg` as one frame to `fd`, looping over partial writes and EINTR.
// Errors: UnavailableError("runner pipe closed: ...") when the peer is gone or
// the write fails; InvalidArgumentError when `msg` is larger than
// kMaxMessageBytes or cannot be serialized.
absl::Status WriteMessage(int fd, const google::protobuf::MessageLite& msg);

// Blocks until one whole frame has been read from `fd` and parses it into
// `msg`. Errors: OutOfRangeError("end of stream") on a clean end of file
// before the first byte of a frame; DataLossError when the stream ends inside
// a frame, the length exceeds kMaxMessageBytes or the bytes do not parse;
// UnavailableError("runner pipe closed: ...") when the read itself fails
// (e.g. connection reset).
absl::Status ReadMessage(int fd, google::protobuf::MessageLite* msg);

// Waits up to `timeout_ms` (negative: forever) for `fd` to become readable.
// Returns true when it is readable or the peer hung up (a read will not
// block), false on timeout. InvalidArgumentError when `fd` is not open;
// InternalError when poll() fails.
absl::StatusOr<bool> WaitReadable(int fd, int timeout_ms);

}  // namespace kbench

#endif  // KBENCH_BASE_PROTO_IO_H_
