// The defaults of a job that several components need, each written once:
// the file name a kernel source gets when its request names none (kbd
// gives it to the job; the compiler, the reports and the sanitizer's line
// attribution fall back to it), and the stopping criterion of timing (kbd
// sends it to the runner in every RunnerJob; the runner's own
// StoppingCriterion and the manifest start from it).
//
// Thread safety: constants and pure functions; safe to call concurrently.
#ifndef KBENCH_CONTRACT_JOB_DEFAULTS_H_
#define KBENCH_CONTRACT_JOB_DEFAULTS_H_

#include "kbench/v1/worker.pb.h"

namespace kbench {

// The kernel's file name in diagnostics ("kernel.cu:3: error: ..."),
// source lines and sanitizer findings when the request names none.
inline constexpr char kDefaultKernelFileName[] = "kernel.cu";

// Timing stops at this relative standard error of the median (0.5%) ...
inline constexpr double kDefaultMaxRelStderr = 0.005;
// ... after at least this many samples ...
inline constexpr int kDefaultMinSamples = 20;
// ... or once this much wall time (ms) has been spent sampling.
inline constexpr int kDefaultMaxTimeMs = 1000;

// The three defaults above as the message a RunnerJob carries.
v1::StoppingCriterion DefaultStoppingCriterion();

// `criterion` with every field that is <= 0 (or NaN) replaced by its
// default: what the runner times with.
v1::StoppingCriterion WithStoppingDefaults(
    const v1::StoppingCriterion& criterion);

}  // namespace kbench

#endif  // KBENCH_CONTRACT_JOB_DEFAULTS_H_
