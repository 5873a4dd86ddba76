// Eventually: polls a condition until it holds or a timeout passes, for
// tests of asynchronous outcomes (a job reaching a stage, a lease expiring)
// that must not sleep a fixed time.
#ifndef KBENCH_TESTING_EVENTUALLY_H_
#define KBENCH_TESTING_EVENTUALLY_H_

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace kbench::testing {

// True once `done()` holds; false if `timeout` passed first. Polls every
// 5 ms.
template <typename F>
bool Eventually(F done, absl::Duration timeout = absl::Seconds(5)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return true;
}

}  // namespace kbench::testing

#endif  // KBENCH_TESTING_EVENTUALLY_H_
