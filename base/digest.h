// Content digests (sha256) for the compile cache, source storage and the
// reproducibility manifest.
// Thread safety: stateless; safe to call concurrently.
#ifndef KBENCH_BASE_DIGEST_H_
#define KBENCH_BASE_DIGEST_H_

#include <string>

#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace kbench {

// sha256 of `data`, as 64 lowercase hex digits.
std::string Sha256Hex(absl::string_view data);

// HMAC-SHA256 of `message` under `key`: 32 raw bytes. A keyed PRF, for
// values that must be unpredictable without the key (hidden cases).
std::string HmacSha256(absl::string_view key, absl::string_view message);

// sha256 (64 hex digits) of the deterministic serialization of `message`
// (map entries sorted), so equal messages always give equal digests.
std::string ProtoDigest(const google::protobuf::Message& message);

}  // namespace kbench

#endif  // KBENCH_BASE_DIGEST_H_
