#include "runner/host/stopping_criterion.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_format.h"

namespace kbench {

StoppingCriterion::Options StoppingCriterion::FromJob(
    const v1::StoppingCriterion& criterion) {
  const v1::StoppingCriterion c = WithStoppingDefaults(criterion);
  Options options;
  options.max_rel_stderr = c.max_rel_stderr();
  options.min_samples = c.min_samples();
  options.max_time_ms = c.max_time_ms();
  return options;
}

double RelMedianStderr(std::vector<double> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  if (n < 2) return std::numeric_limits<double>::infinity();
  const double half = std::sqrt(static_cast<double>(n)) / 2;
  const int64_t lo = std::max<int64_t>(
      0, static_cast<int64_t>(std::floor((n - 1) / 2.0 - half)));
  const int64_t hi = std::min<int64_t>(
      n - 1, static_cast<int64_t>(std::ceil((n - 1) / 2.0 + half)));
  std::nth_element(v.begin(), v.begin() + lo, v.end());
  const double low = v[lo];
  // Everything after lo is >= low: the other ranks are found among them.
  std::nth_element(v.begin() + lo, v.begin() + hi, v.end());
  const double high = v[hi];
  std::nth_element(v.begin() + lo, v.begin() + (n - 1) / 2, v.begin() + hi);
  double median = v[(n - 1) / 2];
  if (n % 2 == 0) {
    median = (median + *std::min_element(v.begin() + n / 2, v.end())) / 2;
  }
  if (median <= 0) return std::numeric_limits<double>::infinity();
  return (high - low) / 2 / median;
}

void StoppingCriterion::Add(double sample) {
  samples_.push_back(sample);
  ++n_;
  const double delta = sample - mean_;
  mean_ += delta / n_;
  m2_ += delta * (sample - mean_);
}

double StoppingCriterion::rel_stderr() const {
  if (n_ < 2 || mean_ <= 0) return std::numeric_limits<double>::infinity();
  const double std_dev = std::sqrt(m2_ / (n_ - 1));
  return std_dev / std::sqrt(static_cast<double>(n_)) / mean_;
}

double StoppingCriterion::rel_median_stderr() const {
  return RelMedianStderr(samples_);
}

bool StoppingCriterion::NoiseMet() const {
  if (n_ < options_.min_samples) return false;
  if (checked_n_ == 0 ||
      n_ >= checked_n_ + std::max<int64_t>(1, checked_n_ / 8)) {
    checked_n_ = n_;
    checked_error_ = rel_median_stderr();
  }
  return checked_error_ <= options_.max_rel_stderr;
}

bool StoppingCriterion::Done(double elapsed_ms) const {
  if (n_ >= options_.max_samples) return true;
  if (n_ >= 1 && elapsed_ms >= options_.max_time_ms) return true;
  return NoiseMet();
}

std::string StoppingCriterion::Reason(double elapsed_ms) const {
  // The estimate Done() decided on, and the sample count it was made at:
  // a workload that met the target keeps sampling, interleaved, until the
  // others do.
  if (NoiseMet()) {
    return absl::StrFormat(
        "median's rel. std. error %.2f%% <= %.2f%% after %d samples",
        100 * checked_error_, 100 * options_.max_rel_stderr, checked_n_);
  }
  const double error = rel_median_stderr();
  if (n_ >= options_.max_samples) {
    return absl::StrFormat(
        "sample cap of %d reached (median's rel. std. error %.2f%%)",
        options_.max_samples, 100 * error);
  }
  if (n_ >= 1 && elapsed_ms >= options_.max_time_ms) {
    return absl::StrFormat(
        "time budget of %.0f ms spent after %d samples (median's rel. std. "
        "error %.2f%%)",
        options_.max_time_ms, n_, 100 * error);
  }
  return "not done";
}

int BatchWithinLimit(int batch, double per_round_ms, double max_time_ms) {
  batch = std::max(1, batch);
  if (per_round_ms <= 0) return batch;
  const double fit = max_time_ms / 4 / per_round_ms;
  return fit < batch ? std::max(1, static_cast<int>(fit)) : batch;
}

}  // namespace kbench
