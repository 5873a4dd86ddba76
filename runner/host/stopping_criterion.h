// StoppingCriterion: decides when enough timing samples have been taken,
// in the style of nvbench's stdrel criterion, for the statistic kbench
// reports, the median. Sampling stops when
//   - at least min_samples were taken and the relative standard error of the
//     median (RelMedianStderr) is at most max_rel_stderr, or
//   - max_samples were taken, or
//   - the time budget is spent (after at least one sample).
// Why the median's error and not the mean's: a run whose time is bimodal
// (the reference's cuBLASLt GEMM waits about 1 us longer before it starts
// in some runs, H100, 2026-12-06) can have a well-known mean and a median
// that jumps between the modes; sampling stopped on the mean's error, and
// one submit's median differed from the next by up to 7 %.
//
// Thread safety: not thread safe; one owner feeds it.
#ifndef KBENCH_RUNNER_HOST_STOPPING_CRITERION_H_
#define KBENCH_RUNNER_HOST_STOPPING_CRITERION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "contract/job_defaults.h"
#include "kbench/v1/worker.pb.h"

namespace kbench {

class StoppingCriterion {
 public:
  struct Options {
    // Fewest samples before the noise test may stop sampling.
    int min_samples = kDefaultMinSamples;
    // Target relative standard error of the median (0.005 = 0.5%).
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
  // Relative standard error of the median (RelMedianStderr of the samples).
  double rel_median_stderr() const;

 private:
  Options options_;
  int64_t n_ = 0;
  double mean_ = 0;  // Welford's running mean and sum of squares.
  double m2_ = 0;
  // Whether the median's error is within the target (after min_samples).
  // It refreshes its estimate only when the sample count has grown by an
  // eighth since the last one, so that a long sampling costs O(n log n),
  // not O(n) per batch.
  bool NoiseMet() const;

  std::vector<double> samples_;
  mutable int64_t checked_n_ = 0;     // Sample count of the estimate.
  mutable double checked_error_ = 0;  // The estimate.
};

// The runs of each workload to queue behind one stream blocker: at most
// `batch` (at least 1), and few enough that a batch takes at most a
// quarter of `max_time_ms`, one round of every workload having taken
// `per_round_ms` in warm-up. Slow kernels get batches of 1, so that the
// time limit is not overrun by a batch; 0 or less: unknown, `batch`.
int BatchWithinLimit(int batch, double per_round_ms, double max_time_ms);

// The relative standard error of the median of `samples`, without
// assuming a distribution: the rank of a sample median has a standard
// deviation of sqrt(n) / 2, so half the distance between the order
// statistics at ranks n/2 - sqrt(n)/2 and n/2 + sqrt(n)/2, over the median,
// estimates it. +inf with fewer than 2 samples or a median <= 0.
double RelMedianStderr(std::vector<double> samples);

}  // namespace kbench

#endif  // KBENCH_RUNNER_HOST_STOPPING_CRITERION_H_
