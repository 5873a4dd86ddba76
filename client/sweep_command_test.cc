#include "client/sweep_command.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kbench {
namespace {

SweepRow Passed(const std::string& problem, double speedup, double floor_us,
                double kernel_gpu_us) {
  SweepRow row;
  row.problem = problem;
  row.file = problem + ".cu";
  row.submitted = true;
  row.wall_s = 0.5;
  v1::JobResult* result = row.job.mutable_result();
  result->set_verdict(v1::VERDICT_PASSED);
  v1::TimingReport* t = result->mutable_timing();
  t->set_speedup(speedup);
  t->set_speedup_basis(v1::TIMING_BASIS_GPU_TIME);
  t->set_floor_us(floor_us);
  t->mutable_kernel()->set_median_us(2 * kernel_gpu_us);  // Events: ignored.
  t->mutable_kernel_gpu()->set_median_us(kernel_gpu_us);
  return row;
}

TEST(SweepCommandTest, TheTableHasARowPerProblemAndTheGeomean) {
  SweepRow failed;
  failed.problem = "softmax";
  failed.file = "softmax.cu";
  failed.submitted = true;
  failed.wall_s = 1.25;
  failed.job.mutable_result()->set_verdict(v1::VERDICT_FAILED);
  failed.job.mutable_result()->mutable_timing()->set_speedup(9);  // Ignored.
  SweepRow missing;
  missing.problem = "rms_norm";
  missing.error = "no .cu file in d has `// @kb problem rms_norm`";
  const std::string text =
      FormatSweep("core",
                  {Passed("matmul", 2.0, 1.0, 4.0), failed, missing,
                   Passed("layer_norm", 8.0, 0, 3.0)},
                  {"x.cu: skipped, no `// @kb problem NAME` line"});
  EXPECT_EQ(text,
            "sweep of suite core: 4 problems\n\n"
            "| problem | kernel | verdict | speedup | of floor | wall |\n"
            "|---|---|---|---:|---:|---:|\n"
            "| matmul | matmul.cu | passed | 2.00x | 25.0 % | 0.50 s |\n"
            "| softmax | softmax.cu | failed | - | - | 1.25 s |\n"
            "| rms_norm | - | no kernel | - | - | - |\n"
            "| layer_norm | layer_norm.cu | passed | 8.00x | - | 0.50 s |\n"
            "\n"
            "geomean speedup over the 2 passed: 4.00x\n"
            "rms_norm: no .cu file in d has `// @kb problem rms_norm`\n"
            "x.cu: skipped, no `// @kb problem NAME` line\n");
}

TEST(SweepCommandTest, NonePassed) {
  SweepRow missing;
  missing.problem = "p";
  EXPECT_NE(
      FormatSweep("s", {missing}, {}).find("sweep of suite s: 1 problem\n"),
      std::string::npos);
  EXPECT_NE(FormatSweep("s", {missing}, {})
                .find("geomean speedup: none "
                      "passed\n"),
            std::string::npos);
}

}  // namespace
}  // namespace kbench
