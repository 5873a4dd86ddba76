// Durations and byte counts as people read them, with their unit.
//
// Thread safety: free functions on values; safe to call concurrently.
#ifndef KBENCH_BASE_UNITS_H_
#define KBENCH_BASE_UNITS_H_

#include <cstdint>
#include <string>

namespace kbench {

// A time given in microseconds, in the unit that reads best, with three or
// four significant digits: "0.85 us", "12.3 us", "999 us", "1.234 ms",
// "2.50 s". Rounding never yields "1000 us" (that is "1.000 ms"). NaN and
// infinities render as "n/a".
std::string FormatDuration(double us);

// A byte count: "0 B", "512 B", "48 KiB", "1.5 MiB", "139.8 GiB".
std::string FormatBytes(int64_t bytes);

}  // namespace kbench

#endif  // KBENCH_BASE_UNITS_H_
