// Sanity checks of a result a worker completed, before kbd stores it as the
// kernel's verdict. A worker is authenticated (contract/worker_auth.h), but a
// buggy or compromised one must still not be able to store a verdict that
// contradicts its own report: PASSED with a failed trial, a speedup of 1000
// over made-up times, a GPU it did not register. CheckWorkerResult finds
// such results; the scheduler then ends the job with an INTERNAL error that
// says the worker sent an inconsistent result, never with that verdict.
//
// What an honest result looks like is what runner/ (and the stand-in
// testing/fake_runner_main.cc) produce: see the checks in result_check.cc.
//
// Thread safety: pure functions.
#ifndef KBENCH_SERVER_CORE_RESULT_CHECK_H_
#define KBENCH_SERVER_CORE_RESULT_CHECK_H_

#include <cstddef>

#include "absl/status/status.h"
#include "kbench/v1/report.pb.h"
#include "kbench/v1/worker.pb.h"

namespace kbench {

struct ResultLimits {
  // Largest serialized result.
  size_t max_result_bytes = size_t{32} << 20;
  // Largest log (the worker keeps 64 KiB of kernel stdout plus notes).
  size_t max_log_bytes = 256 * 1024;
  // Largest message and error message.
  size_t max_message_bytes = 16 * 1024;
  // Most correctness trials (and manifest seeds).
  int max_trials = 100000;
  // Most entries of any other repeated field (launches, hot lines, hints,
  // diagnostics, sanitizer findings and runs, ...).
  int max_items = 10000;
  // No kernel or reference median time is below this (event timing of any
  // launch on any GPU), in us.
  double min_time_us = 0.5;
  // speedup must equal reference median / kernel median within this share.
  double speedup_tolerance = 0.01;
};

// OK when `result` is consistent with itself, with `job` (the leased job)
// and with `registered` (the GPU the worker registered with). Otherwise
// InvalidArgument saying what is wrong, e.g. "verdict PASSED but trial 3
// (default/b12) failed".
absl::Status CheckWorkerResult(const v1::RunnerJob& job,
                               const v1::GpuSpec& registered,
                               const v1::JobResult& result,
                               const ResultLimits& limits = {});

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_RESULT_CHECK_H_
