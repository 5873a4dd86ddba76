// Tests SanitizerRunner without a GPU: finding compute-sanitizer, the tool
// list, the cut-down job, the "not installed" error, and whole runs against
// a stand-in compute-sanitizer script that writes canned logs.
#include "worker/sanitizer_runner.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

std::string TempDir() {
  std::string t = ::testing::TempDir() + "/kbsan.XXXXXX";
  EXPECT_NE(mkdtemp(&t[0]), nullptr);
  return t;
}

// A script standing in for compute-sanitizer: writes `log_<tool>` to the
// --log-file path and (unless told not to) an empty result where kbrunner
// --oneshot would, and exits with `exit_code`; or sleeps when asked to.
std::string WriteFakeSanitizer(const std::string& dir, int exit_code,
                               bool hang = false, bool write_result = true) {
  const std::string path = dir + "/compute-sanitizer";
  std::ofstream out(path);
  out << "#!/bin/sh\n"
      << "tool=memcheck; log=/dev/null; res=/dev/null\n"
      << "while [ $# -gt 0 ]; do case \"$1\" in\n"
      << "  --tool) tool=$2; shift;;\n"
      << "  --log-file) log=$2; shift;;\n"
      << "  --oneshot) res=$3; shift 2;;\n"
      << "esac; shift; done\n"
      << "echo \"printf from the kernel\"\n"
      << (hang ? "sleep 30\n" : "") << "cat \"" << dir
      << "/log_$tool\" > \"$log\" 2>/dev/null\n"
      << (write_result ? ": > \"$res\"\n" : "") << "exit " << exit_code << "\n";
  out.close();
  chmod(path.c_str(), 0755);
  return path;
}

void WriteLog(const std::string& dir, const std::string& tool,
              const std::string& text) {
  std::ofstream(dir + "/log_" + tool) << text;
}

const char kSource[] =
    "// @kb launch gather_linear grid=(1) block=(32)\n"
    "extern \"C\" __global__ void gather_linear(float* out) {\n"
    "  out[threadIdx.x + 1] = 0;\n"
    "}\n";

v1::RunnerJob Job() {
  v1::RunnerJob job;
  job.set_job_id("j1");
  job.set_kind(v1::JOB_KIND_SANITIZE);
  job.set_source(kSource);
  job.set_filename("kernel.cu");
  job.set_trials(5);
  job.set_budget_ms(1000);
  for (const char* set : {"default", "odd"}) {
    v1::ShapeSet* s = job.add_check_sets();
    s->set_name(set);
    for (const char* shape : {"a", "b"}) {
      v1::Shape* sh = s->add_shapes();
      sh->set_name(std::string(set) + "_" + shape);
      (*sh->mutable_dims())["B"] = 4;
    }
  }
  return job;
}

SanitizerRunner::Options Opts(const std::string& sanitizer) {
  SanitizerRunner::Options o;
  o.sanitizer_path = sanitizer;
  o.runner_path = "/bin/true";
  o.worker_id = "host:gpu0";
  o.min_tool_budget = absl::Seconds(20);
  o.temp_dir = ::testing::TempDir();
  return o;
}

TEST(SanitizerRunnerTest, FindSanitizerExplicitPathMustBeExecutable) {
  absl::StatusOr<std::string> s =
      SanitizerRunner::FindSanitizer("/nonexistent/compute-sanitizer");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.status().message(), HasSubstr("/nonexistent"));
  const std::string dir = TempDir();
  const std::string fake = WriteFakeSanitizer(dir, 0);
  EXPECT_EQ(*SanitizerRunner::FindSanitizer(fake), fake);
}

TEST(SanitizerRunnerTest, FindSanitizerSearchesCudaHome) {
  const std::string dir = TempDir();
  mkdir((dir + "/bin").c_str(), 0755);
  const std::string fake = WriteFakeSanitizer(dir + "/bin", 0);
  const char* old = std::getenv("CUDA_HOME");
  const std::string saved = old ? old : "";
  setenv("CUDA_HOME", dir.c_str(), 1);
  absl::StatusOr<std::string> found = SanitizerRunner::FindSanitizer("");
  if (old) {
    setenv("CUDA_HOME", saved.c_str(), 1);
  } else {
    unsetenv("CUDA_HOME");
  }
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, fake);
}

TEST(SanitizerRunnerTest, ToolsOf) {
  v1::RunnerJob job = Job();
  EXPECT_THAT(*SanitizerRunner::ToolsOf(job),
              ::testing::ElementsAre("memcheck", "racecheck", "initcheck"));
  job.add_sanitize_tools("initcheck");
  job.add_sanitize_tools("memcheck");
  EXPECT_THAT(*SanitizerRunner::ToolsOf(job),
              ::testing::ElementsAre("memcheck", "initcheck"));
  job.add_sanitize_tools("synccheck");
  absl::StatusOr<std::vector<std::string>> bad = SanitizerRunner::ToolsOf(job);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("synccheck"));
}

TEST(SanitizerRunnerTest, SmallJobKeepsOneShapeAndOneTrial) {
  const v1::RunnerJob small = SanitizerRunner::SmallJob(Job());
  EXPECT_EQ(small.trials(), 1);
  EXPECT_EQ(small.kind(), v1::JOB_KIND_SANITIZE);
  ASSERT_EQ(small.check_sets_size(), 1);
  EXPECT_EQ(small.check_sets(0).name(), "default");
  ASSERT_EQ(small.check_sets(0).shapes_size(), 1);
  EXPECT_EQ(small.check_sets(0).shapes(0).name(), "default_a");
  EXPECT_EQ(small.source(), kSource);
}

TEST(SanitizerRunnerTest, NotInstalledIsAFailedPreconditionResult) {
  SanitizerRunner runner(Opts("/nonexistent/compute-sanitizer"));
  const v1::JobResult r = runner.Run(
      Job(), [](const std::string&) {}, nullptr);
  EXPECT_EQ(r.verdict(), v1::VERDICT_ERROR);
  EXPECT_EQ(r.error().code(),
            static_cast<int>(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(r.message(), HasSubstr("compute-sanitizer is not installed on "
                                     "worker host:gpu0"));
  EXPECT_FALSE(r.has_sanitize());
}

TEST(SanitizerRunnerTest, FindingsFromEachToolAndHarnessFiltered) {
  const std::string dir = TempDir();
  WriteLog(dir, "memcheck",
           "========= COMPUTE-SANITIZER\n"
           "========= Invalid __global__ write of size 4 bytes\n"
           "=========     at gather_linear+0x40 in kernel.cu:3\n"
           "=========     by thread (31,0,0) in block (0,0,0)\n"
           "=========     Address 0x7f00 is out of bounds\n"
           "=========\n"
           "========= Invalid __global__ read of size 4 bytes\n"
           "=========     at 0x1b0 in gemm.cu:88:cublas_gemv\n"
           "=========\n"
           "========= ERROR SUMMARY: 2 errors\n");
  WriteLog(dir, "racecheck",
           "========= COMPUTE-SANITIZER\n"
           "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 "
           "warnings)\n");
  SanitizerRunner runner(Opts(WriteFakeSanitizer(dir, 86)));
  v1::RunnerJob job = Job();
  job.add_sanitize_tools("memcheck");
  job.add_sanitize_tools("racecheck");
  std::vector<std::string> progress;
  const v1::JobResult r = runner.Run(
      job, [&](const std::string& d) { progress.push_back(d); }, nullptr);
  EXPECT_EQ(r.verdict(), v1::VERDICT_FAILED);
  EXPECT_THAT(r.message(), HasSubstr("memcheck: Invalid __global__ write"));
  EXPECT_THAT(r.message(), HasSubstr("kernel.cu:3"));
  EXPECT_THAT(progress,
              ::testing::ElementsAre("memcheck (1/2)", "racecheck (2/2)"));
  const v1::SanitizeReport& s = r.sanitize();
  ASSERT_EQ(s.runs_size(), 2);
  EXPECT_EQ(s.runs(0).tool(), "memcheck");
  EXPECT_EQ(s.runs(0).exit_code(), 86);
  EXPECT_EQ(s.runs(0).findings(), 1);  // The cuBLAS read is not the kernel's.
  EXPECT_EQ(s.runs(0).summary(), "ERROR SUMMARY: 2 errors");
  EXPECT_EQ(s.runs(1).findings(), 0);
  ASSERT_EQ(s.findings_size(), 1);
  EXPECT_EQ(s.findings(0).source_line(), "out[threadIdx.x + 1] = 0;");
  EXPECT_EQ(s.shape_set(), "default");
  EXPECT_EQ(s.shape(), "default_a");
  EXPECT_THAT(r.log(), HasSubstr("printf from the kernel"));
}

TEST(SanitizerRunnerTest, CleanRunPasses) {
  const std::string dir = TempDir();
  for (const char* tool : {"memcheck", "racecheck", "initcheck"}) {
    WriteLog(dir, tool,
             "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 "
             "errors\n");
  }
  SanitizerRunner runner(Opts(WriteFakeSanitizer(dir, 0)));
  const v1::JobResult r = runner.Run(
      Job(), [](const std::string&) {}, nullptr);
  EXPECT_EQ(r.verdict(), v1::VERDICT_PASSED) << r.message();
  ASSERT_EQ(r.sanitize().runs_size(), 3);
  EXPECT_EQ(r.sanitize().findings_size(), 0);
  for (const v1::SanitizeToolRun& run : r.sanitize().runs()) {
    EXPECT_EQ(run.exit_code(), 0) << run.tool();
    EXPECT_FALSE(run.timed_out());
  }
}

TEST(SanitizerRunnerTest, RunnerThatNeverFinishesIsAnError) {
  const std::string dir = TempDir();
  WriteLog(dir, "memcheck",
           "========= COMPUTE-SANITIZER\n"
           "========= Error: Target application terminated before first "
           "instrumented API call\n");
  SanitizerRunner runner(Opts(WriteFakeSanitizer(dir, 1, /*hang=*/false,
                                                 /*write_result=*/false)));
  const v1::JobResult r = runner.Run(
      Job(), [](const std::string&) {}, nullptr);
  EXPECT_EQ(r.verdict(), v1::VERDICT_ERROR);
  EXPECT_EQ(r.error().code(), static_cast<int>(absl::StatusCode::kInternal));
  EXPECT_THAT(r.message(),
              HasSubstr("compute-sanitizer memcheck did not run the kernel"));
  EXPECT_THAT(r.message(), HasSubstr("Target application terminated"));
  ASSERT_EQ(r.sanitize().runs_size(), 1);
  EXPECT_EQ(r.sanitize().runs(0).exit_code(), 1);
  EXPECT_EQ(r.sanitize().findings_size(), 0);
}

TEST(SanitizerRunnerTest, ToolPastItsBudgetIsKilled) {
  const std::string dir = TempDir();
  SanitizerRunner::Options o = Opts(WriteFakeSanitizer(dir, 0, /*hang=*/true));
  o.min_tool_budget = absl::Milliseconds(300);
  o.max_tool_budget = absl::Milliseconds(300);
  SanitizerRunner runner(o);
  const v1::JobResult r = runner.Run(
      Job(), [](const std::string&) {}, nullptr);
  EXPECT_EQ(r.verdict(), v1::VERDICT_TIMED_OUT);
  EXPECT_THAT(r.message(), HasSubstr("memcheck ran past"));
  ASSERT_EQ(r.sanitize().runs_size(), 1);  // Stops after the first.
  EXPECT_TRUE(r.sanitize().runs(0).timed_out());
}

TEST(SanitizerRunnerTest, CancelStopsTheRun) {
  const std::string dir = TempDir();
  SanitizerRunner runner(Opts(WriteFakeSanitizer(dir, 0, /*hang=*/true)));
  std::atomic<bool> cancel{true};
  const v1::JobResult r = runner.Run(
      Job(), [](const std::string&) {}, &cancel);
  EXPECT_EQ(r.verdict(), v1::VERDICT_CANCELLED);
}

}  // namespace
}  // namespace kbench
