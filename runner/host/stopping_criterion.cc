#include "runner/host/stopping_criterion.h"

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

void StoppingCriterion::Add(double sample) {
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

bool StoppingCriterion::Done(double elapsed_ms) const {
  if (n_ >= options_.max_samples) return true;
  if (n_ >= 1 && elapsed_ms >= options_.max_time_ms) return true;
  return n_ >= options_.min_samples && rel_stderr() <= options_.max_rel_stderr;
}

std::string StoppingCriterion::Reason(double elapsed_ms) const {
  if (n_ >= options_.min_samples && rel_stderr() <= options_.max_rel_stderr) {
    return absl::StrFormat("rel. std. error %.2f%% <= %.2f%% after %d samples",
                           100 * rel_stderr(), 100 * options_.max_rel_stderr,
                           n_);
  }
  if (n_ >= options_.max_samples) {
    return absl::StrFormat("sample cap of %d reached (rel. std. error %.2f%%)",
                           options_.max_samples, 100 * rel_stderr());
  }
  if (n_ >= 1 && elapsed_ms >= options_.max_time_ms) {
    return absl::StrFormat(
        "time budget of %.0f ms spent after %d samples (rel. std. error "
        "%.2f%%)",
        options_.max_time_ms, n_, 100 * rel_stderr());
  }
  return "not done";
}

}  // namespace kbench
