// Files that hold a secret kbd keeps (the worker token, the holdout secret):
// read only when they are a regular file owned by this user with no group or
// other permission bits, and created once, atomically, with mode 0600.
//
// Thread safety: the functions are safe to call concurrently, from threads
// or processes (two creators of one file agree on its contents).
#ifndef KBENCH_BASE_SECRET_FILE_H_
#define KBENCH_BASE_SECRET_FILE_H_

#include <cstddef>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kbench {

// The words a secret file's messages use.
struct SecretFileText {
  // What the file is, e.g. "worker token file".
  std::string what;
  // Said when the file does not exist, e.g. "kbd creates DATA_DIR/x on its
  // first start: copy that file here (mode 0600)".
  std::string when_missing;
  // What whoever reads the file can do, e.g. "lease jobs and forge their
  // results" (said when group or others may read it).
  std::string risk;
  // The option that names another file, e.g. "--worker-token-file".
  std::string flag;
};

// Fills `out` with `n` bytes from the kernel's CSPRNG (getrandom, else
// /dev/urandom).
absl::Status RandomBytes(unsigned char* out, size_t n);

// The contents of a secret file (at most `max_bytes`). NotFound when it does
// not exist; PermissionDenied when it is not a regular file, or its owner or
// mode is wrong; InvalidArgument when it is larger than `max_bytes`. Each
// message names the file and what to do.
absl::StatusOr<std::string> ReadSecretFile(const std::string& path,
                                           const SecretFileText& text,
                                           size_t max_bytes);

// Reads `path`, or when it does not exist creates it holding `make()`'s
// contents: written to a temporary file in the same directory with mode
// 0600, then linked into place, so that no reader sees a partial file and
// concurrent creators agree (the loser reads the winner's file).
absl::StatusOr<std::string> LoadOrCreateSecretFile(
    const std::string& path, const SecretFileText& text, size_t max_bytes,
    const std::function<absl::StatusOr<std::string>()>& make);

}  // namespace kbench

#endif  // KBENCH_BASE_SECRET_FILE_H_
