// The problem library on a real GPU (issue 16): kbd serving every shipped
// problem, one local worker. For each problem (all are data, gather_linear
// included): its own checks pass (check cases against the golden, the
// baseline against the golden: any failure refuses the problem in every
// job), its example passes run_correctness and submit (timed against its
// baseline on every basis), a kernel that writes zeros and one that writes
// only the first half of each output fail, and profile works. Then `kbctl
// sweep` over each suite. Skips without an NVIDIA GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "client/kbench_client.h"
#include "contract/problem_registry.h"
#include "contract/problem_util.h"
#include "testing/process.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using ::kbench::testing::KbdProcess;
using ::testing::HasSubstr;

// A kernel for `problem` that writes zero bytes to the first `fraction`
// (0, 1] of every output and leaves the rest as the harness poisoned it.
std::string PartialZeroKernel(const v1::Problem& problem, double fraction) {
  std::vector<std::string> params, dims, body;
  for (const std::string& name : problem.signature()) {
    if (const v1::TensorSpec* t = FindTensor(problem, name)) {
      params.push_back(
          absl::StrCat(t->role() == v1::TENSOR_ROLE_INPUT ? "const " : "",
                       DTypeCName(t->dtype()), "* ", name));
      if (t->role() != v1::TENSOR_ROLE_OUTPUT) continue;
      std::vector<std::string> extents;
      for (const std::string& e : t->shape()) {
        extents.push_back(
            absl::StrCat("(",
                         absl::StrReplaceAll(e, {{"cdiv(", "kb_cdiv("},
                                                 {"min(", "kb_min("},
                                                 {"max(", "kb_max("}}),
                         ")"));
      }
      body.push_back(absl::StrCat(
          "  { const long long n = (long long)(", fraction, " * (double)(",
          absl::StrJoin(extents, " * "), " * sizeof(*", name, ")));\n",
          "    char* p = (char*)", name, ";\n",
          "    for (long long i = blockIdx.x * (long long)blockDim.x + "
          "threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) "
          "p[i] = 0; }\n"));
    } else {
      params.push_back(absl::StrCat("int d_", name));
      dims.push_back(
          absl::StrCat("  const long long ", name, " = d_", name, ";\n"));
    }
  }
  return absl::StrCat(
      "#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n", "// @kb problem ",
      problem.name(), "\n", "// @kb launch partial grid(264) block(256)\n",
      "__device__ long long kb_cdiv(long long a, long long b) "
      "{ return (a + b - 1) / b; }\n",
      "__device__ long long kb_min(long long a, long long b) "
      "{ return a < b ? a : b; }\n",
      "__device__ long long kb_max(long long a, long long b) "
      "{ return a > b ? a : b; }\n",
      "extern \"C\" __global__ void partial(", absl::StrJoin(params, ", "),
      ") {\n", absl::StrJoin(dims, ""), absl::StrJoin(body, ""), "}\n");
}

class ProblemLibraryGpuTest : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    if (!testing::HasGpu()) return;
    auto registry =
        ProblemRegistry::LoadDir(testing::SourcePath("kernels/problems"));
    ASSERT_TRUE(registry.ok()) << registry.status();
    registry_ = registry->release();
    auto kbd = KbdProcess::Start({{"--local-worker=1", "--problems-dir",
                                   testing::SourcePath("kernels/problems")},
                                  ""});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = kbd->release();
    client_ = new KbenchClient(kbd_->address(), absl::Seconds(300));
    for (int i = 0; i < 600; ++i) {
      auto specs = client_->GetGpuSpecs(v1::GetGpuSpecsRequest());
      if (specs.ok() && specs->gpus_size() > 0) return;
      absl::SleepFor(absl::Milliseconds(100));
    }
    FAIL() << "the local worker did not connect; kbd log:\n" << kbd_->Log();
  }
  static void TearDownTestSuite() {
    delete client_;
    delete kbd_;
    delete registry_;
  }
  void SetUp() override {
    KB_SKIP_WITHOUT_GPU();
    absl::StatusOr<const v1::Problem*> p = registry_->Find(GetParam());
    ASSERT_TRUE(p.ok()) << p.status();
    problem_ = *p;
  }
  v1::KernelRequest Kernel(const std::string& source) const {
    v1::KernelRequest k;
    k.set_source(source);
    k.set_filename("kernel.cu");
    k.set_problem(problem_->name());
    return k;
  }

  static ProblemRegistry* registry_;
  static KbdProcess* kbd_;
  static KbenchClient* client_;
  const v1::Problem* problem_ = nullptr;
};
ProblemRegistry* ProblemLibraryGpuTest::registry_ = nullptr;
KbdProcess* ProblemLibraryGpuTest::kbd_ = nullptr;
KbenchClient* ProblemLibraryGpuTest::client_ = nullptr;

TEST_P(ProblemLibraryGpuTest, ExamplePassesAndTimesAgainstItsBaseline) {
  v1::RunCorrectnessRequest check;
  *check.mutable_kernel() = Kernel(problem_->example_source());
  auto checked = client_->RunCorrectness(check);
  ASSERT_TRUE(checked.ok()) << checked.status();
  ASSERT_EQ(checked->result().verdict(), v1::VERDICT_PASSED)
      << checked->result().message();

  v1::SubmitKernelRequest submit;
  *submit.mutable_kernel() = Kernel(problem_->example_source());
  const auto t0 = std::chrono::steady_clock::now();
  auto submitted = client_->SubmitKernel(submit);
  const double ms = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - t0)
                        .count();
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  const v1::JobResult& r = submitted->result();
  ASSERT_EQ(r.verdict(), v1::VERDICT_PASSED) << r.message();
  const v1::TimingReport& t = r.timing();
  EXPECT_GT(t.kernel().median_us(), 0);
  EXPECT_GT(t.reference().median_us(), 0);
  EXPECT_GT(t.kernel_gpu().n(), 0) << t.gpu_time_note();
  EXPECT_GT(t.reference_gpu().n(), 0) << t.gpu_time_note();
  EXPECT_GT(t.reference_graph().n(), 0) << t.gpu_time_note();
  EXPECT_EQ(t.reference_name(), problem_->baseline().name());
  EXPECT_GE(t.reference_launches(), problem_->baseline().steps_size());
  if (problem_->has_expert()) {
    // The expert baseline (checked against the golden before the problem
    // was used) is timed beside the baseline on every basis.
    EXPECT_EQ(t.expert_name(), problem_->expert().name());
    EXPECT_GE(t.expert_launches(), problem_->expert().steps_size());
    EXPECT_GT(t.expert().n(), 0);
    EXPECT_GT(t.expert_gpu().n(), 0) << t.gpu_time_note();
    EXPECT_GT(t.expert_graph().n(), 0) << t.gpu_time_note();
    EXPECT_GT(t.speedup_vs_expert(), 0);
    std::printf("| %s | expert %s: %.3f us (GPU time), kernel %.2fx vs it |\n",
                problem_->name().c_str(), t.expert_name().c_str(),
                t.expert_gpu().median_us(), t.speedup_vs_expert());
  } else {
    EXPECT_FALSE(t.has_expert());
    EXPECT_EQ(t.speedup_vs_expert(), 0);
  }
  std::printf("| %s | %.3f us | %.3f us | %.2fx | %d | %.0f ms |\n",
              problem_->name().c_str(), t.kernel_gpu().median_us(),
              t.reference_gpu().median_us(), t.speedup(),
              t.reference_launches(), ms);
}

TEST_P(ProblemLibraryGpuTest, ZerosAndHalfAnOutputFail) {
  for (const double fraction : {1.0, 0.5}) {
    v1::RunCorrectnessRequest check;
    *check.mutable_kernel() = Kernel(PartialZeroKernel(*problem_, fraction));
    auto checked = client_->RunCorrectness(check);
    ASSERT_TRUE(checked.ok()) << checked.status();
    EXPECT_EQ(checked->result().verdict(), v1::VERDICT_FAILED)
        << "zeros in " << fraction
        << " of each output: " << checked->result().message();
  }
}

TEST_P(ProblemLibraryGpuTest, ProfileWorks) {
  v1::ProfileKernelRequest req;
  *req.mutable_kernel() = Kernel(problem_->example_source());
  req.mutable_kernel()->set_profile_preset("fast");
  auto profiled = client_->ProfileKernel(req);
  ASSERT_TRUE(profiled.ok()) << profiled.status();
  EXPECT_EQ(profiled->result().verdict(), v1::VERDICT_PASSED)
      << profiled->result().message();
  EXPECT_TRUE(profiled->result().has_profile());
}

// Every shipped problem (all are data: a golden kernel and a baseline).
std::vector<std::string> ShippedProblems() {
  std::vector<std::string> names;
  auto registry =
      ProblemRegistry::LoadDir(testing::SourcePath("kernels/problems"));
  if (!registry.ok()) return names;
  for (const v1::Problem* p : (*registry)->List()) names.push_back(p->name());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Library, ProblemLibraryGpuTest,
                         ::testing::ValuesIn(ShippedProblems()),
                         [](const auto& info) { return info.param; });

// `kbctl sweep --suite S DIR` over the examples of each suite: every
// problem passes, and the table names each with its wall time.
TEST(ProblemLibrarySweepTest, EverySuiteSweepsClean) {
  KB_SKIP_WITHOUT_GPU();
  auto kbd = KbdProcess::Start({{"--local-worker=1", "--problems-dir",
                                 testing::SourcePath("kernels/problems")},
                                ""});
  ASSERT_TRUE(kbd.ok()) << kbd.status();
  testing::TempDir dir;
  for (const auto& e :
       fs::recursive_directory_iterator(testing::SourcePath("kernels"))) {
    if (e.path().filename() == "example.cu") {
      fs::copy_file(e.path(),
                    fs::path(dir.path()) /
                        (e.path().parent_path().filename().string() + ".cu"));
    }
  }
  for (const char* f :
       {"gather_linear_naive.cu", "gather_linear_naive_bf16.cu"}) {
    fs::copy_file(testing::SourcePath(std::string("kernels/examples/") + f),
                  fs::path(dir.path()) / f);
  }
  // As one sweep (SubmitSweep), then one submit at a time (--serial: each
  // wall time is one submit's latency).
  for (const char* suite : {"collectives", "core"}) {
    for (const char* mode : {"--suite", "--serial"}) {
      std::vector<std::string> args = {testing::BinDir() + "/kbctl", "--server",
                                       (*kbd)->address(), "sweep"};
      if (std::string(mode) == "--serial") args.push_back("--serial");
      args.insert(args.end(), {"--suite", suite, dir.path()});
      const testing::CommandResult r =
          testing::RunCommand(args, {}, absl::Seconds(600));
      std::printf("kbctl sweep %s--suite %s:\n%s\n",
                  std::string(mode) == "--serial" ? "--serial " : "", suite,
                  r.out.c_str());
      EXPECT_EQ(r.exit_code, 0) << r.err;
    }
  }
}

}  // namespace
}  // namespace kbench
