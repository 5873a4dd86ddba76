#include "client/sweep_command.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kbench {
namespace {

v1::SweepRow Passed(const std::string& problem, double speedup, double floor_us,
                    double kernel_us) {
  v1::SweepRow row;
  row.set_problem(problem);
  row.set_filename(problem + ".cu");
  row.set_job_id("j-" + problem);
  row.set_stage(v1::STAGE_DONE);
  row.set_verdict(v1::VERDICT_PASSED);
  row.set_speedup(speedup);
  row.set_floor_us(floor_us);
  row.set_kernel_us(kernel_us);
  row.set_runner_ms(420);
  row.set_wall_ms(500);
  return row;
}

TEST(SweepCommandTest, TheTableHasARowPerProblemAndTheGeomean) {
  v1::Sweep sweep;
  sweep.set_suite("core");
  *sweep.add_rows() = Passed("matmul", 2.0, 1.0, 4.0);
  v1::SweepRow* failed = sweep.add_rows();
  failed->set_problem("softmax");
  failed->set_filename("softmax.cu");
  failed->set_job_id("j-1");
  failed->set_stage(v1::STAGE_DONE);
  failed->set_verdict(v1::VERDICT_FAILED);
  failed->set_speedup(9);  // Not a pass: not shown.
  failed->set_message("3 of 10 outputs outside tolerance");
  failed->set_wall_ms(1250);
  sweep.add_rows()->set_problem("rms_norm");  // No kernel.
  v1::SweepRow* refused = sweep.add_rows();
  refused->set_problem("gelu");
  refused->set_filename("gelu.cu");
  refused->mutable_error()->set_code(3);
  refused->mutable_error()->set_message("kernels[2] (gelu.cu): too big");
  v1::SweepRow* running = sweep.add_rows();
  running->set_problem("attention");
  running->set_filename("attention.cu");
  running->set_job_id("j-2");
  running->set_stage(v1::STAGE_RUNNING);
  *sweep.add_rows() = Passed("layer_norm", 8.0, 0, 3.0);
  sweep.set_passed(2);
  sweep.set_geomean_speedup(4);
  const std::string text =
      FormatSweep(sweep, {"x.cu: skipped, no `// @kb problem NAME` line"});
  EXPECT_EQ(
      text,
      "sweep of suite core: 6 problems\n\n"
      "| problem | kernel | verdict | speedup | of floor | run | wall |\n"
      "|---|---|---|---:|---:|---:|---:|\n"
      "| matmul | matmul.cu | passed | 2.00x | 25.0 % | 0.42 s | 0.50 s |\n"
      "| softmax | softmax.cu | failed | - | - | - | 1.25 s |\n"
      "| rms_norm | - | no kernel | - | - | - | - |\n"
      "| gelu | gelu.cu | refused | - | - | - | - |\n"
      "| attention | attention.cu | running | - | - | - | - |\n"
      "| layer_norm | layer_norm.cu | passed | 8.00x | - | 0.42 s | 0.50 s "
      "|\n"
      "\n"
      "geomean speedup over the 2 passed: 4.00x\n"
      "wall per job: p50 0.50 s, max 1.25 s over 3\n"
      "softmax: failed: 3 of 10 outputs outside tolerance\n"
      "gelu: kernels[2] (gelu.cu): too big\n"
      "x.cu: skipped, no `// @kb problem NAME` line\n");
}

TEST(SweepCommandTest, NonePassed) {
  v1::Sweep sweep;
  sweep.set_suite("s");
  sweep.add_rows()->set_problem("p");
  const std::string text = FormatSweep(sweep, {});
  EXPECT_NE(text.find("sweep of suite s: 1 problem\n"), std::string::npos);
  EXPECT_NE(text.find("geomean speedup: none passed\n"), std::string::npos);
}

}  // namespace
}  // namespace kbench
