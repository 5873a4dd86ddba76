#include "base/units.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace kbench {

std::string FormatDuration(double us) {
  if (!std::isfinite(us)) return "n/a";
  const char* sign = us < 0 ? "-" : "";
  const double a = std::fabs(us);
  // Thresholds sit where rounding would carry into the next digit, so
  // 999.7 us reads "1.000 ms", never "1000 us".
  if (a > 0 && a < 0.0995) {  // Below 0.1 us: "7.70 ns", not "0.01 us".
    const double ns = a * 1e3;
    return absl::StrFormat("%s%.*f ns", sign, ns < 9.995 ? 2 : 1, ns);
  }
  if (a < 999.5) {
    const int decimals = a < 9.995 ? 2 : (a < 99.95 ? 1 : 0);
    return absl::StrFormat("%s%.*f us", sign, decimals, a);
  }
  if (a < 999950) {
    const double ms = a / 1e3;
    const int decimals = ms < 9.9995 ? 3 : (ms < 99.995 ? 2 : 1);
    return absl::StrFormat("%s%.*f ms", sign, decimals, ms);
  }
  const double s = a / 1e6;
  const int decimals = s < 9.995 ? 2 : (s < 99.95 ? 1 : 0);
  return absl::StrFormat("%s%.*f s", sign, decimals, s);
}

std::string FormatBytes(int64_t bytes) {
  if (bytes < 0) {
    return absl::StrCat("-",
                        FormatBytes(bytes == INT64_MIN ? INT64_MAX : -bytes));
  }
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (v >= 1023.95 && unit < 4) {
    v /= 1024;
    ++unit;
  }
  std::string number = absl::StrFormat("%.1f", v);
  if (absl::EndsWith(number, ".0")) number.resize(number.size() - 2);
  return absl::StrCat(number, " ", kUnits[unit]);
}

}  // namespace kbench
