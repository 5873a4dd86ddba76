// The worker token: the shared secret that lets kbworker use kbd's
// WorkerService (LeaseJob, Heartbeat, CompleteJob). Without it any gRPC
// client could lease a victim's job (source, cubin, hidden shapes, seed) and
// forge its verdict.
//  - kbd keeps the token in a file: by default DATA_DIR/worker.token, which
//    it creates on first start (32 random bytes as 64 hex digits, mode
//    0600, created atomically), or the file given by --worker-token-file.
//  - A token file must be a regular file owned by the reading user with no
//    group or other permission bits; anything else is refused with a message
//    that says how to fix it.
//  - kbworker reads it from --token-file, $KBENCH_WORKER_TOKEN_FILE or
//    $KBENCH_WORKER_TOKEN (never from its command line, which `ps` shows)
//    and sends `authorization: Bearer <token>` metadata on every worker RPC.
//  - WorkerAuthenticator checks that header in constant time.
//
// This file is linked into both kbd and kbworker (target kb_contract); it
// knows nothing about gRPC.
// Thread safety: the functions are safe to call concurrently (two processes
// creating the same file agree on one token); WorkerAuthenticator is
// immutable after construction.
#ifndef KBENCH_CONTRACT_WORKER_AUTH_H_
#define KBENCH_CONTRACT_WORKER_AUTH_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kbench {

// The file name of kbd's token inside its data directory.
inline constexpr char kWorkerTokenFileName[] = "worker.token";
// Environment variables kbworker reads when --token-file is not given.
inline constexpr char kWorkerTokenFileEnv[] = "KBENCH_WORKER_TOKEN_FILE";
inline constexpr char kWorkerTokenEnv[] = "KBENCH_WORKER_TOKEN";
// The gRPC metadata key (lower case, as HTTP/2 requires) and its scheme.
inline constexpr char kAuthorizationKey[] = "authorization";
inline constexpr char kBearerPrefix[] = "Bearer ";

// A fresh token: 32 bytes from the kernel's CSPRNG (getrandom, else
// /dev/urandom), as 64 lower-case hex digits.
absl::StatusOr<std::string> GenerateWorkerToken();

// OK when `token` is 32 to 512 characters of [A-Za-z0-9._~+/=-] (what fits
// in a header value, with enough room for entropy). `where` names its
// source in the message (a file, an environment variable).
absl::Status ValidateWorkerToken(absl::string_view token,
                                 absl::string_view where);

// Reads a token file: a regular file owned by this process's effective user
// with no group/other permission bits, holding one token (surrounding
// whitespace is ignored). NotFound when it does not exist; PermissionDenied
// when its owner or mode is wrong; InvalidArgument when its text is not a
// token. Each message names the file and what to do.
absl::StatusOr<std::string> ReadWorkerTokenFile(const std::string& path);

// kbd's default file: reads `path`, or when it does not exist creates it
// with a fresh token (written to a temporary file in the same directory with
// mode 0600, then linked into place, so that no reader ever sees a partial
// file and concurrent creators agree on one token).
absl::StatusOr<std::string> LoadOrCreateWorkerTokenFile(
    const std::string& path);

// kbworker's token: from `flag_path` if not empty, else the file named by
// $KBENCH_WORKER_TOKEN_FILE, else $KBENCH_WORKER_TOKEN itself.
// FailedPrecondition naming all three when none is set.
absl::StatusOr<std::string> ResolveWorkerToken(const std::string& flag_path);

// Equal contents, in time that depends only on the lengths.
bool TokensEqual(absl::string_view a, absl::string_view b);

// Checks the `authorization` metadata of a WorkerService call.
class WorkerAuthenticator {
 public:
  struct Options {
    // The token workers must present.
    std::string token;
    // Where the token lives, for the messages (e.g.
    // /var/lib/kbench/worker.token).
    std::string token_file;
  };
  explicit WorkerAuthenticator(Options options)
      : options_(std::move(options)) {}

  // `authorization` is the header's value, or nullopt when the call has
  // none. Unauthenticated when it is missing or not "Bearer <token>";
  // PermissionDenied when the token is wrong.
  absl::Status Check(std::optional<absl::string_view> authorization) const;

 private:
  Options options_;
};

}  // namespace kbench

#endif  // KBENCH_CONTRACT_WORKER_AUTH_H_
