// Content digests (sha256) for the compile cache and source storage.
// Thread safety: stateless; safe to call concurrently.
#ifndef KBENCH_COMMON_DIGEST_H_
#define KBENCH_COMMON_DIGEST_H_

#include <string>

#include "absl/strings/string_view.h"

namespace kbench {

// sha256 of `data`, as 64 lowercase hex digits.
std::string Sha256Hex(absl::string_view data);

}  // namespace kbench

#endif  // KBENCH_COMMON_DIGEST_H_
