// Guard regions around the runner's device buffers: every tensor is
// allocated with kGuardBytes before and after it, filled with a canary
// pattern, and the pattern is checked after each candidate run. This file
// is the host side (the pattern and the check), testable without a GPU.
//
// Thread safety: pure functions; safe to call concurrently.
#ifndef KBENCH_RUNNER_HOST_GUARD_PATTERN_H_
#define KBENCH_RUNNER_HOST_GUARD_PATTERN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kbench {

// Bytes of guard on each side of a tensor; a multiple of 256, so the
// tensor itself keeps cudaMalloc's 256-byte alignment.
inline constexpr size_t kGuardBytes = 4096;

// The canary pattern of one guard region (kGuardBytes bytes). The two sides
// differ, and no 4-byte word of either is a common float (0, 1, NaN).
std::vector<uint8_t> GuardPattern(bool after);

// Damage found in one guard region, as byte offsets relative to the tensor:
// before the tensor the offsets are negative (-1 is the byte just before),
// after it they count from the end (0 is the first byte past the end).
struct GuardDamage {
  int64_t bytes = 0;  // Bytes that differ from the pattern.
  int64_t first = 0;  // Offset of the damaged byte nearest the tensor.
  int64_t last = 0;   // Offset of the damaged byte farthest from it.
};

// Compares `region` (kGuardBytes bytes read back from the device) with the
// pattern of its side. Returns bytes == 0 when intact.
GuardDamage CheckGuard(const std::vector<uint8_t>& region, bool after);

// "" when both regions are intact; otherwise one line naming the tensor,
// the side and the byte counts, e.g. "out of bounds: the kernel wrote 16
// bytes past the end of 'out' (bytes 0..15 after its 224 bytes)".
std::string DescribeGuardDamage(const std::string& tensor, int64_t size_bytes,
                                const std::vector<uint8_t>& before,
                                const std::vector<uint8_t>& after);

}  // namespace kbench

#endif  // KBENCH_RUNNER_HOST_GUARD_PATTERN_H_
