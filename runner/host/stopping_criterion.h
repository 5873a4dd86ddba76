// StoppingCriterion: decides when enough timing samples have been taken,
// in the style of nvbench's stdrel criterion. Sampling stops when
//   - at least min_samples were taken and the relative standard error of the
//     mean (std / sqrt(n) / mean) is at most max_rel_stderr, or
//   - max_samples were taken, or
//   - the time budget is spent (after at least one sample).
//
// Thread safety: not thread safe; one owner feeds it.
#ifndef KBENCH_RUNNER_HOST_STOPPING_CRITERION_H_
#define KBENCH_RUNNER_HOST_STOPPING_CRITERION_H_

#include <cstdint>
#include <string>

#include "contract/job_defaults.h"
#include "kbench/v1/worker.pb.h"

namespace kbench {

class StoppingCriterion {
 public:
  struct Options {
    // Fewest samples before the noise test may stop sampling.
    int min_samples = kDefaultMinSamples;
    // Target relative standard error of the mean (0.005 = 0.5%).
    double max_rel_stderr = kDefaultMaxRelStderr;
    // Hard cap on samples.
    int max_samples = 100000;
    // Time budget for sampling, in ms of wall time (measured by the caller).
    double max_time_ms = kDefaultMaxTimeMs;
  };

  explicit StoppingCriterion(const Options& options) : options_(options) {}

  // Options from a job's criterion (RunnerJob.stopping); fields <= 0 take
  // their defaults (contract/job_defaults.h). max_samples keeps its own.
  static Options FromJob(const v1::StoppingCriterion& criterion);

  // Adds one sample (any unit; only ratios are used).
  void Add(double sample);

  // True when sampling should stop, given the wall time spent so far.
  bool Done(double elapsed_ms) const;

  // Why Done() became true (or "not done"), e.g.
  // "rel. std. error 0.31% <= 0.50% after 64 samples".
  std::string Reason(double elapsed_ms) const;

  int count() const { return static_cast<int>(n_); }
  double mean() const { return n_ ? mean_ : 0; }
  // Relative standard error of the mean; +inf with fewer than 2 samples.
  double rel_stderr() const;

 private:
  Options options_;
  int64_t n_ = 0;
  double mean_ = 0;  // Welford's running mean and sum of squares.
  double m2_ = 0;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_HOST_STOPPING_CRITERION_H_
