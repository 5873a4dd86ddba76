// The runner's hardening on a real GPU, through the Evaluator with small
// inline kernels: guard regions (out-of-bounds writes are rejected), input
// checksums (mutation is rejected), twice-run (races fail), verified timed
// outputs (a kernel that skips work after N calls fails with "timed"),
// hidden cases (failures say only "failed on a hidden case"), the launch
// plan taken from the job, never from the source (a job without one is an
// error), and the manifest and SM clocks of a passing submit. Skips without
// an NVIDIA GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/digest.h"
#include "compiler/nvrtc_compiler.h"
#include "contract/holdout.h"
#include "contract/launch_plan.h"
#include "contract/problem_registry.h"
#include "runner/device/ceilings.h"
#include "runner/device/clock_probe.h"
#include "runner/device/device_context.h"
#include "runner/device/tensor_set.h"
#include "runner/evaluator.h"
#include "testing/process.h"
#include "tests/gpu/device_test.h"
#include "tests/gpu/trusted_kernels_fixtures.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The naive kernel with a hook: EXTRA runs after the output is written.
constexpr char kTemplate[] = R"(// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)
GLOBALS
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  const int b = blockIdx.x;
  const int k = blockIdx.y * blockDim.x + threadIdx.x;
  PROLOGUE
  if (b >= B || k >= K) return;
  float acc = bias[k];
  for (int r = 0; r < R; ++r) {
    for (int h = 0; h < H; ++h) {
      acc += x[(r * B + b) * H + h] * w[k * (R * H) + r * H + h];
    }
  }
  out[b * K + k] = acc;
  EXTRA
}
)";

std::string Kernel(const std::string& globals, const std::string& prologue,
                   const std::string& extra) {
  return absl::StrReplaceAll(
      kTemplate,
      {{"GLOBALS", globals}, {"PROLOGUE", prologue}, {"EXTRA", extra}});
}

// Split-K over every (r, h) with a non-atomic += into a zero-filled
// workspace: lost updates make the result wrong and run-dependent.
constexpr char kRacy[] = R"(// @kb problem gather_linear_fp32
// @kb workspace acc bytes(B * K * 4)
// @kb launch partial grid(B, cdiv(K, 64), R * H) block(64) args(x, w, acc, R, B, H, K)
// @kb launch finish grid(B, cdiv(K, 256)) block(256) args(acc, bias, out, B, K)
extern "C" __global__ void partial(const float* x, const float* w, float* acc,
                                   int R, int B, int H, int K) {
  const int b = blockIdx.x, k = blockIdx.y * blockDim.x + threadIdx.x;
  const int r = blockIdx.z / H, h = blockIdx.z % H;
  if (k >= K) return;
  volatile float* a = acc;
  a[b * K + k] = a[b * K + k] + x[(r * B + b) * H + h] * w[k * (R * H) + r * H + h];
}
extern "C" __global__ void finish(const float* acc, const float* bias,
                                  float* out, int B, int K) {
  const int b = blockIdx.x, k = blockIdx.y * blockDim.x + threadIdx.x;
  if (k < K) out[b * K + k] = acc[b * K + k] + bias[k];
}
)";

class HardeningTest : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_TRUE(MeasureCeilings(ctx_.get(), ctx_->mutable_spec()).ok());
    auto eval = Evaluator::Create(ctx_.get());
    ASSERT_TRUE(eval.ok()) << eval.status();
    eval_ = std::move(*eval);
    auto reg = ProblemRegistry::LoadDir(ProblemRegistry::DefaultDir());
    ASSERT_TRUE(reg.ok()) << reg.status();
    registry_ = std::move(*reg);
    // As kbd does once per problem and arch: the golden and baseline
    // kernels, compiled here once and copied into every job.
    const absl::Status trusted =
        testing::AttachTrustedKernels(**registry_->Find("gather_linear_fp32"),
                                      ctx_->spec().arch(), &trusted_);
    ASSERT_TRUE(trusted.ok()) << trusted;
  }

  // A job as kbd would build it (check sets, hidden sets for submit).
  v1::RunnerJob Job(v1::JobKind kind, const std::string& source,
                    int min_samples = 0) {
    const v1::Problem* p = *registry_->Find("gather_linear_fp32");
    v1::RunnerJob job = trusted_;  // The problem's trusted kernels.
    job.set_job_id("t");
    job.set_kind(kind);
    *job.mutable_problem() = *p;
    job.set_source(source);
    job.set_filename("kernel.cu");
    // As kbd does: the plan parsed from the `// @kb` lines (the runner
    // does not read them).
    if (absl::StatusOr<v1::LaunchPlan> plan = ParseLaunchPlan(source);
        plan.ok()) {
      *job.mutable_plan() = *std::move(plan);
    }
    job.set_source_digest(Sha256Hex(source));
    // As kbd does: the cubin compiled for this GPU's arch (the runner never
    // compiles). A source that does not compile travels without one.
    const std::string arch = ctx_->spec().arch();
    absl::StatusOr<CompileOutput> out =
        NvrtcCompiler().Compile(source, "kernel.cu", arch);
    if (out.ok() && out->report.success()) {
      job.set_cubin(out->cubin);
      job.set_cubin_arch(arch);
    }
    for (const std::string& name : p->check_shape_sets()) {
      for (const v1::ShapeSet& s : p->shape_sets()) {
        if (s.name() == name) *job.add_check_sets() = s;
      }
    }
    if (kind == v1::JOB_KIND_SUBMIT) {
      // As kbd does: the cases of every size class, drawn for this job
      // (here from a fixed key, so that a failure reproduces).
      absl::StatusOr<std::vector<v1::ShapeSet>> drawn =
          DrawHoldoutSets(*p, absl::StrCat("hardening-test-", seed_));
      EXPECT_TRUE(drawn.ok()) << drawn.status();
      if (drawn.ok()) {
        for (v1::ShapeSet& s : *drawn) *job.add_check_sets() = std::move(s);
      }
    }
    job.set_timing_set("default");
    for (const v1::ShapeSet& s : p->shape_sets()) {
      if (s.name() == "default") *job.mutable_timing_shape() = s.shapes(0);
    }
    job.set_trials(5);
    job.set_seed(++seed_);
    job.set_budget_ms(60000);
    if (min_samples > 0) {
      job.mutable_stopping()->set_min_samples(min_samples);
      job.mutable_stopping()->set_max_time_ms(20000);
    }
    return job;
  }

  v1::JobResult Run(const v1::RunnerJob& job) {
    return testing::RunHealthy(eval_.get(), job);
  }

  void ExpectNaivePasses(const std::string& why) {
    const v1::JobResult r =
        Run(Job(v1::JOB_KIND_CORRECTNESS, Kernel("", "", "")));
    EXPECT_EQ(r.verdict(), v1::VERDICT_PASSED) << why << ": " << r.message();
  }

  std::unique_ptr<Evaluator> eval_;
  std::unique_ptr<ProblemRegistry> registry_;
  v1::RunnerJob trusted_;  // Only the trusted kernels' fields set.
  uint64_t seed_ = 1000;
};

TEST_F(HardeningTest, InputsHaveWideRangeMixedSignsAndNoZeros) {
  const v1::Problem* p = *registry_->Find("gather_linear_fp32");
  DimValues dims = {{"R", 4}, {"B", 12}, {"H", 32}, {"K", 56}};
  auto tensors = TensorSet::Allocate(*p, dims);
  ASSERT_TRUE(tensors.ok());
  ASSERT_TRUE(tensors->FillInputs(5, ctx_->stream()).ok());
  std::vector<double> w;
  ASSERT_TRUE(
      tensors->ReadAsDouble(*tensors->Find("w"), ctx_->stream(), &w).ok());
  int negative = 0, small = 0, large = 0;
  for (double v : w) {
    EXPECT_NE(v, 0);
    EXPECT_LT(std::fabs(v), 1.0);
    EXPECT_GE(std::fabs(v), 0.99e-3);
    negative += v < 0;
    small += std::fabs(v) < 1e-2;
    large += std::fabs(v) > 1e-1;
  }
  EXPECT_GT(negative, static_cast<int>(w.size()) / 3);
  EXPECT_GT(small, static_cast<int>(w.size()) / 5);
  EXPECT_GT(large, static_cast<int>(w.size()) / 5);
  // Guards are intact after a fill.
  ASSERT_TRUE(tensors->FillGuards(ctx_->stream()).ok());
  std::string damage;
  ASSERT_TRUE(tensors->CheckGuards(ctx_->stream(), &damage).ok());
  EXPECT_EQ(damage, "");
  // Payload pointers keep 256-byte alignment.
  for (const TensorSet::Tensor& t : tensors->tensors()) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.buffer.get()) % 256, 0u);
  }
}

TEST_F(HardeningTest, ClockProbeMeasuresAPlausibleClock) {
  auto probe = ClockProbe::Create(ctx_.get());
  ASSERT_TRUE(probe.ok());
  auto mhz = (*probe)->MeasureMhz();
  ASSERT_TRUE(mhz.ok()) << mhz.status();
  EXPECT_GT(*mhz, 100);
  EXPECT_LT(*mhz, 1.2 * ctx_->spec().sm_clock_mhz() + 100);
}

TEST_F(HardeningTest, TheRunnerTakesThePlanFromTheJobNotTheSource) {
  // No plan: kbd's fault, refused before anything runs.
  v1::RunnerJob job = Job(v1::JOB_KIND_CORRECTNESS, Kernel("", "", ""));
  job.clear_plan();
  v1::JobResult r = Run(job);
  EXPECT_EQ(r.verdict(), v1::VERDICT_ERROR) << r.message();
  EXPECT_THAT(r.message(), HasSubstr("carries no launch plan"));
  // A plan that does not fit the problem is the kernel's (as when the
  // runner parsed the source itself).
  job = Job(v1::JOB_KIND_CORRECTNESS, Kernel("", "", ""));
  job.mutable_plan()->mutable_launches(0)->set_grid(0, "Q");
  r = Run(job);
  EXPECT_EQ(r.verdict(), v1::VERDICT_REJECTED) << r.message();
  EXPECT_THAT(r.message(), HasSubstr("uses 'Q', which is not a dim"));
  // The plan is what runs: one that differs from the source's `// @kb`
  // lines (grid y = 1 covers only 256 of K = 1000 outputs) fails.
  job = Job(v1::JOB_KIND_CORRECTNESS, Kernel("", "", ""));
  job.mutable_plan()->mutable_launches(0)->set_grid(1, "1");
  r = Run(job);
  EXPECT_EQ(r.verdict(), v1::VERDICT_FAILED) << r.message();
  EXPECT_THAT(r.message(), HasSubstr("NaN or unwritten"));
  ExpectNaivePasses("after the refused jobs");
}

TEST_F(HardeningTest, OutOfBoundsWriteIsRejected) {
  const v1::JobResult r =
      Run(Job(v1::JOB_KIND_CORRECTNESS,
              Kernel("", "",
                     "if (b == 0 && k == 0) for (int i = 0; i < 4; ++i) "
                     "out[B * K + i] = 0.f;")));
  EXPECT_EQ(r.verdict(), v1::VERDICT_REJECTED) << r.message();
  EXPECT_THAT(r.message(), HasSubstr("out of bounds"));
  EXPECT_THAT(r.message(), HasSubstr("'out'"));
  EXPECT_THAT(r.message(), HasSubstr("past its end"));
  EXPECT_THAT(r.message(), HasSubstr("bytes 0..15"));
  ExpectNaivePasses("after an out-of-bounds write");
}

TEST_F(HardeningTest, WriteBeforeAnOutputIsRejected) {
  const v1::JobResult r =
      Run(Job(v1::JOB_KIND_CORRECTNESS,
              Kernel("", "", "if (b == 0 && k == 0) out[-1] = 0.f;")));
  EXPECT_EQ(r.verdict(), v1::VERDICT_REJECTED) << r.message();
  EXPECT_THAT(r.message(), HasSubstr("before its start"));
}

TEST_F(HardeningTest, InputMutationIsRejected) {
  const v1::JobResult r =
      Run(Job(v1::JOB_KIND_CORRECTNESS,
              Kernel("", "", "if (k == 0) ((float*)bias)[0] = 1234.f;")));
  EXPECT_EQ(r.verdict(), v1::VERDICT_REJECTED) << r.message();
  EXPECT_THAT(r.message(), HasSubstr("modified input 'bias'"));
  ExpectNaivePasses("after an input mutation");
}

TEST_F(HardeningTest, DataRaceFails) {
  const v1::JobResult r = Run(Job(v1::JOB_KIND_CORRECTNESS, kRacy));
  EXPECT_EQ(r.verdict(), v1::VERDICT_FAILED) << r.message();
  EXPECT_FALSE(r.message().empty());
  ExpectNaivePasses("after a data race");
}

TEST_F(HardeningTest, CachingAcrossCallsFailsOnTheSecondRun) {
  // Computes on the first call only.
  const v1::JobResult r =
      Run(Job(v1::JOB_KIND_CORRECTNESS,
              Kernel("__device__ int calls;",
                     "__shared__ int seen; if (threadIdx.x == 0) seen = "
                     "atomicAdd(&calls, 0); __syncthreads(); if (seen > 0) "
                     "return;",
                     "if (b == 0 && k == 0) atomicAdd(&calls, 1);")));
  EXPECT_EQ(r.verdict(), v1::VERDICT_FAILED) << r.message();
}

TEST_F(HardeningTest, SkippingAfterManyCallsFailsAsTimed) {
  // Correct until 200 calls of its module: more than the check's 114
  // (submit: 6 visible shapes x 7 trials + 3 hidden x 5, each run twice),
  // fewer than the timed runs with >= 300 samples.
  const v1::JobResult r = Run(Job(
      v1::JOB_KIND_SUBMIT,
      Kernel("__device__ int calls;",
             "__shared__ int seen; if (threadIdx.x == 0) seen = "
             "atomicAdd(&calls, 0); __syncthreads(); if (seen >= 200) return;",
             "if (b == 0 && k == 0) atomicAdd(&calls, 1);"),
      /*min_samples=*/300));
  EXPECT_TRUE(r.correctness().passed()) << r.correctness().message();
  EXPECT_EQ(r.verdict(), v1::VERDICT_FAILED) << r.message();
  EXPECT_THAT(r.message(), HasSubstr("timed"));
}

TEST_F(HardeningTest, HiddenFailureSaysOnlyItsClassAndTheFigures) {
  // Wrong only for B > 200: no public shape, every mid-size hidden case.
  const v1::JobResult r =
      Run(Job(v1::JOB_KIND_SUBMIT,
              Kernel("", "", "if (B > 200) out[b * K + k] = acc + 1.f;")));
  EXPECT_EQ(r.verdict(), v1::VERDICT_FAILED) << r.message();
  EXPECT_THAT(r.message(),
              HasSubstr("failed on a hidden mid-size case (R in 1..8, B in "
                        "257..4096"));
  EXPECT_THAT(r.message(), HasSubstr("outside tolerance"));
  EXPECT_THAT(r.message(), Not(HasSubstr("B=")));
  int hidden = 0;
  for (const v1::TrialResult& t : r.correctness().trials()) {
    hidden += t.hidden();
    // The public shapes all pass: the hidden class is what catches it.
    if (!t.hidden()) {
      EXPECT_TRUE(t.passed()) << t.DebugString();
    }
  }
  // 6 visible shapes x 2 hidden seeds + 4 small, 2 mid and 1 large case.
  EXPECT_EQ(hidden, 19);
  EXPECT_EQ(r.manifest().hidden_trials(), 19);
}

// Only kbd's jailed compiler may run NVRTC on a kernel source: a job whose
// cubin is missing or for another arch is an error, never compiled here.
TEST_F(HardeningTest, TheRunnerNeverCompiles) {
  v1::RunnerJob job = Job(v1::JOB_KIND_CORRECTNESS, Kernel("", "", ""));
  ASSERT_FALSE(job.cubin().empty());
  job.set_cubin_arch("sm_80");
  v1::JobResult r = Run(job);
  EXPECT_EQ(r.verdict(), v1::VERDICT_ERROR);
  EXPECT_THAT(r.message(), HasSubstr("does not compile"));
  job.clear_cubin();
  job.set_cubin_arch(ctx_->spec().arch());
  r = Run(job);
  EXPECT_EQ(r.verdict(), v1::VERDICT_ERROR);
  EXPECT_THAT(r.message(), HasSubstr("does not compile"));
  ExpectNaivePasses("after the refused jobs");
}

TEST_F(HardeningTest, CorrectNaiveSubmitPassesWithManifestAndClocks) {
  const v1::JobResult r = Run(Job(v1::JOB_KIND_SUBMIT, Kernel("", "", "")));
  ASSERT_EQ(r.verdict(), v1::VERDICT_PASSED) << r.message();
  const v1::ReproManifest& m = r.manifest();
  EXPECT_FALSE(m.gpu_name().empty());
  EXPECT_FALSE(m.gpu_uuid().empty());
  EXPECT_FALSE(m.driver_version().empty());
  EXPECT_FALSE(m.nvrtc_version().empty());
  EXPECT_GT(m.max_sm_clock_mhz(), 0);
  EXPECT_GT(m.measured_sm_clock_before_mhz(), 0);
  EXPECT_GT(m.measured_sm_clock_after_mhz(), 0);
  EXPECT_FALSE(m.compile_options().empty());
  EXPECT_EQ(m.trials(), 5);
  EXPECT_EQ(m.seeds_size(), 30);  // default + odd, 5 visible trials each.
  EXPECT_EQ(m.problem_digest().size(), 64u);
  EXPECT_EQ(m.shape_set_digests().count("odd"), 1u);
  for (const auto& [name, digest] : m.shape_set_digests()) {
    EXPECT_FALSE(absl::StartsWith(name, kHoldoutSetPrefix)) << name;
  }
  EXPECT_TRUE(m.l2_flushed());
  // The job's unset criterion takes the defaults; the digest is the job's.
  EXPECT_EQ(m.stopping_criterion(),
            "median rel stderr <= 0.5%, >= 20 samples, <= 1000 ms");
  EXPECT_EQ(m.source_digest(), Sha256Hex(Kernel("", "", "")));
  EXPECT_GT(r.timing().sm_clock_before_mhz(), 0);
  EXPECT_GT(r.timing().floor_us(), 0);
  EXPECT_GT(r.timing().kernel().median_us(), r.timing().floor_us());
}

}  // namespace
}  // namespace kbench
