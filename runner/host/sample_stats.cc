#include "runner/host/sample_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kbench {

v1::Stats ComputeStats(std::vector<double> samples_us) {
  v1::Stats stats;
  const size_t n = samples_us.size();
  stats.set_n(static_cast<int>(n));
  if (n == 0) return stats;
  std::sort(samples_us.begin(), samples_us.end());
  const double sum = std::accumulate(samples_us.begin(), samples_us.end(), 0.0);
  const double mean = sum / n;
  double ss = 0;
  for (double s : samples_us) ss += (s - mean) * (s - mean);
  const double std_dev = n > 1 ? std::sqrt(ss / (n - 1)) : 0.0;
  const double median = n % 2 == 1
                            ? samples_us[n / 2]
                            : 0.5 * (samples_us[n / 2 - 1] + samples_us[n / 2]);
  stats.set_mean_us(mean);
  stats.set_median_us(median);
  stats.set_std_us(std_dev);
  stats.set_min_us(samples_us.front());
  stats.set_max_us(samples_us.back());
  stats.set_rel_stderr(mean > 0 ? std_dev / std::sqrt(double(n)) / mean : 0);
  return stats;
}

}  // namespace kbench
