#include "contract/sweep_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kbench {
namespace {

v1::Job TimedJob(v1::Verdict verdict, double speedup) {
  v1::Job job;
  job.set_stage(v1::STAGE_DONE);
  job.set_created_unix_ms(1000);
  job.set_finished_unix_ms(1750);
  v1::JobResult* r = job.mutable_result();
  r->set_verdict(verdict);
  r->set_message("one line");
  r->set_runner_ms(420);
  v1::TimingReport* t = r->mutable_timing();
  t->set_speedup(speedup);
  t->set_speedup_basis(v1::TIMING_BASIS_GPU_TIME);
  t->mutable_kernel()->set_median_us(9);  // Events: not the basis.
  t->mutable_kernel_gpu()->set_median_us(4);
  t->set_floor_us(1);
  return job;
}

TEST(SweepTableTest, ARowTakesTheFiguresOfItsBasis) {
  v1::SweepRow row;
  FillSweepRow(TimedJob(v1::VERDICT_PASSED, 2.5), &row);
  EXPECT_EQ(row.stage(), v1::STAGE_DONE);
  EXPECT_EQ(row.verdict(), v1::VERDICT_PASSED);
  EXPECT_EQ(row.message(), "one line");
  EXPECT_EQ(row.speedup(), 2.5);
  EXPECT_EQ(row.basis(), v1::TIMING_BASIS_GPU_TIME);
  EXPECT_EQ(row.kernel_us(), 4);
  EXPECT_EQ(row.floor_us(), 1);
  EXPECT_EQ(row.wall_ms(), 750);
  EXPECT_EQ(row.runner_ms(), 420);
}

TEST(SweepTableTest, OnlyAPassedFiniteSpeedupCounts) {
  for (const double bad :
       {0.0, -1.0, std::numeric_limits<double>::infinity(), std::nan("")}) {
    v1::SweepRow row;
    FillSweepRow(TimedJob(v1::VERDICT_PASSED, bad), &row);
    EXPECT_EQ(row.speedup(), 0) << bad;
    EXPECT_EQ(row.kernel_us(), 0) << bad;
  }
  v1::SweepRow failed;
  FillSweepRow(TimedJob(v1::VERDICT_FAILED, 3), &failed);
  EXPECT_EQ(failed.speedup(), 0);
  // An unfinished job has no wall time yet.
  v1::Job running = TimedJob(v1::VERDICT_UNSPECIFIED, 0);
  running.set_stage(v1::STAGE_RUNNING);
  v1::SweepRow row;
  FillSweepRow(running, &row);
  EXPECT_EQ(row.wall_ms(), 0);
  EXPECT_EQ(row.stage(), v1::STAGE_RUNNING);
}

TEST(SweepTableTest, TheTotalsCountJobsAndTheGeomeanOfTimedPasses) {
  v1::Sweep sweep;
  auto add = [&](const char* job_id, v1::Stage stage, v1::Verdict verdict,
                 double speedup) {
    v1::SweepRow* r = sweep.add_rows();
    r->set_job_id(job_id);
    r->set_stage(stage);
    r->set_verdict(verdict);
    r->set_speedup(speedup);
  };
  add("a", v1::STAGE_DONE, v1::VERDICT_PASSED, 2);
  add("b", v1::STAGE_DONE, v1::VERDICT_PASSED, 8);
  add("c", v1::STAGE_DONE, v1::VERDICT_PASSED, 0);  // Passed, not timed.
  add("d", v1::STAGE_DONE, v1::VERDICT_FAILED, 0);
  add("", v1::STAGE_UNSPECIFIED, v1::VERDICT_UNSPECIFIED, 0);  // No kernel.
  SummarizeSweep(&sweep);
  EXPECT_TRUE(sweep.done());
  EXPECT_EQ(sweep.jobs(), 4);
  EXPECT_EQ(sweep.passed(), 3);
  EXPECT_DOUBLE_EQ(sweep.geomean_speedup(), 4);

  add("e", v1::STAGE_RUNNING, v1::VERDICT_UNSPECIFIED, 0);
  SummarizeSweep(&sweep);
  EXPECT_FALSE(sweep.done());
  EXPECT_EQ(sweep.jobs(), 5);

  v1::Sweep none;
  SummarizeSweep(&none);
  EXPECT_TRUE(none.done());
  EXPECT_EQ(none.geomean_speedup(), 0);
}

}  // namespace
}  // namespace kbench
