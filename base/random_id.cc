#include "base/random_id.h"

#include <cstdint>

#include "absl/random/random.h"
#include "absl/strings/str_format.h"

namespace kbench {

std::string NewRandomId(absl::string_view prefix) {
  absl::BitGen gen;
  return absl::StrFormat("%s%012x", prefix,
                         absl::Uniform<uint64_t>(gen) & 0xffffffffffffull);
}

}  // namespace kbench
