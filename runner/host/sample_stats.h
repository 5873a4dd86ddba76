// Summary statistics of timing samples (mean, median, std, min, max, n and
// the relative standard error of the mean), in microseconds.
// Thread safety: pure function; safe to call concurrently.
#ifndef KBENCH_RUNNER_HOST_SAMPLE_STATS_H_
#define KBENCH_RUNNER_HOST_SAMPLE_STATS_H_

#include <vector>

#include "kbench/v1/report.pb.h"

namespace kbench {

// Statistics of `samples_us`. std is the sample standard deviation (n - 1);
// rel_stderr = std / sqrt(n) / mean. An empty input gives n = 0 and zeros.
v1::Stats ComputeStats(std::vector<double> samples_us);

}  // namespace kbench

#endif  // KBENCH_RUNNER_HOST_SAMPLE_STATS_H_
