#include "contract/job_defaults.h"

namespace kbench {

v1::StoppingCriterion DefaultStoppingCriterion() {
  v1::StoppingCriterion c;
  c.set_max_rel_stderr(kDefaultMaxRelStderr);
  c.set_min_samples(kDefaultMinSamples);
  c.set_max_time_ms(kDefaultMaxTimeMs);
  return c;
}

v1::StoppingCriterion WithStoppingDefaults(
    const v1::StoppingCriterion& criterion) {
  v1::StoppingCriterion c = criterion;
  // `!(x > 0)` also catches NaN, which a plain `x <= 0` lets through.
  if (!(c.max_rel_stderr() > 0)) c.set_max_rel_stderr(kDefaultMaxRelStderr);
  if (c.min_samples() <= 0) c.set_min_samples(kDefaultMinSamples);
  if (c.max_time_ms() <= 0) c.set_max_time_ms(kDefaultMaxTimeMs);
  return c;
}

}  // namespace kbench
