#include "contract/sweep_table.h"

#include <cmath>

namespace kbench {
namespace {

// The kernel's median on the basis its speedup used: GPU time or events
// (kbd's result check refuses any other basis for the speedup).
double BasisKernelUs(const v1::TimingReport& t) {
  return t.speedup_basis() == v1::TIMING_BASIS_GPU_TIME
             ? t.kernel_gpu().median_us()
             : t.kernel().median_us();
}

}  // namespace

void FillSweepRow(const v1::Job& job, v1::SweepRow* row) {
  const v1::JobResult& result = job.result();
  row->set_stage(job.stage());
  row->set_verdict(result.verdict());
  row->set_message(result.message());
  row->set_runner_ms(result.runner_ms());
  row->set_wall_ms(0);
  if (job.stage() == v1::STAGE_DONE && job.finished_unix_ms() > 0 &&
      job.finished_unix_ms() >= job.created_unix_ms()) {
    row->set_wall_ms(
        static_cast<double>(job.finished_unix_ms() - job.created_unix_ms()));
  }
  row->set_speedup(0);
  row->set_basis(v1::TIMING_BASIS_UNSPECIFIED);
  row->set_kernel_us(0);
  row->set_floor_us(0);
  const v1::TimingReport& t = result.timing();
  // A speedup counts only where it is a finite positive figure: a job
  // row read back from an old or hand-edited store may hold anything.
  if (result.verdict() == v1::VERDICT_PASSED && std::isfinite(t.speedup()) &&
      t.speedup() > 0) {
    row->set_speedup(t.speedup());
    row->set_basis(t.speedup_basis());
    const double kernel_us = BasisKernelUs(t);
    if (std::isfinite(kernel_us) && kernel_us > 0) {
      row->set_kernel_us(kernel_us);
    }
    if (std::isfinite(t.floor_us()) && t.floor_us() > 0) {
      row->set_floor_us(t.floor_us());
    }
  }
}

void SummarizeSweep(v1::Sweep* sweep) {
  bool done = true;
  int jobs = 0;
  int passed = 0;
  int timed = 0;
  double log_sum = 0;
  for (const v1::SweepRow& row : sweep->rows()) {
    if (row.job_id().empty()) continue;
    ++jobs;
    if (row.stage() != v1::STAGE_DONE) done = false;
    if (row.verdict() != v1::VERDICT_PASSED) continue;
    ++passed;
    if (row.speedup() > 0) {
      log_sum += std::log(row.speedup());
      ++timed;
    }
  }
  sweep->set_done(done);
  sweep->set_jobs(jobs);
  sweep->set_passed(passed);
  sweep->set_geomean_speedup(timed > 0 ? std::exp(log_sum / timed) : 0);
}

}  // namespace kbench
