#include "runner/host/guard_pattern.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace kbench {

std::vector<uint8_t> GuardPattern(bool after) {
  std::vector<uint8_t> p(kGuardBytes);
  // A byte-wise counter hash: no aligned word is 0, 0x3f800000 (1.0f) or
  // a NaN pattern, and the sides differ.
  uint32_t x = after ? 0xC2B2AE3Du : 0x27D4EB2Fu;
  for (size_t i = 0; i < p.size(); ++i) {
    x = x * 1664525u + 1013904223u;
    uint8_t b = static_cast<uint8_t>(x >> 24);
    if (b == 0x00 || b == 0x7f || b == 0xff || b == 0x3f || b == 0x80)
      b ^= 0x5a;
    p[i] = b;
  }
  return p;
}

GuardDamage CheckGuard(const std::vector<uint8_t>& region, bool after) {
  static const std::vector<uint8_t> kBefore = GuardPattern(false);
  static const std::vector<uint8_t> kAfter = GuardPattern(true);
  const std::vector<uint8_t>& want = after ? kAfter : kBefore;
  GuardDamage d;
  const size_t n = std::min(region.size(), want.size());
  for (size_t i = 0; i < n; ++i) {
    if (region[i] == want[i]) continue;
    // Offsets relative to the tensor.
    const int64_t off =
        after ? static_cast<int64_t>(i) : static_cast<int64_t>(i) - int64_t(n);
    if (d.bytes == 0) {
      d.first = off;
      d.last = off;
    }
    if (after) {
      d.first = std::min(d.first, off);
      d.last = std::max(d.last, off);
    } else {
      d.first = std::max(d.first, off);  // Nearest the tensor: -1 side.
      d.last = std::min(d.last, off);
    }
    ++d.bytes;
  }
  if (region.size() < want.size()) d.bytes += want.size() - region.size();
  return d;
}

std::string DescribeGuardDamage(const std::string& tensor, int64_t size_bytes,
                                const std::vector<uint8_t>& before,
                                const std::vector<uint8_t>& after) {
  const GuardDamage b = CheckGuard(before, false);
  const GuardDamage a = CheckGuard(after, true);
  if (b.bytes == 0 && a.bytes == 0) return "";
  std::string out = "out of bounds: the kernel wrote outside '" + tensor + "'";
  if (a.bytes > 0) {
    absl::StrAppend(&out,
                    absl::StrFormat(": %d bytes changed past its end (bytes "
                                    "%d..%d after its %d bytes)",
                                    a.bytes, a.first, a.last, size_bytes));
  }
  if (b.bytes > 0) {
    absl::StrAppend(
        &out, a.bytes > 0 ? "; and" : ":",
        absl::StrFormat(" %d bytes changed before its start (bytes %d..%d "
                        "before it)",
                        b.bytes, -b.first, -b.last));
  }
  absl::StrAppend(&out,
                  ". Check the bounds of every store against the tensor's "
                  "extents (odd shapes are tested)");
  return out;
}

}  // namespace kbench
