// The check of a kernel for a problem that spans GPUs (docs/multi-gpu.md,
// step 4), on one GPU: both ranks of tests/integration/problems/
// allgather_fp32 on device 0 (--rank-devices 0,0), each with its own
// stream and buffers, peers' buffers passed through peer(NAME, RANK).
// What the lent one-GPU machines can show of the multi-rank runner: the
// placement of every tensor, the gathered golden, peer reads and writes,
// and the kernel that reads only its own shard failing; a submit timed
// on both ranks against the baseline (its all-gather by peer reads); and
// a profile counting rank 0's kernels alone. Peer access between distinct
// GPUs needs a multi-GPU machine.
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/digest.h"
#include "compiler/nvrtc_compiler.h"
#include "contract/launch_plan.h"
#include "contract/problem_registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runner/evaluator.h"
#include "testing/process.h"
#include "tests/gpu/device_test.h"
#include "tests/gpu/trusted_kernels_fixtures.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

// Reads both ranks' shards: rank r's out is x of rank 0, then of rank 1.
constexpr char kPeerRead[] = R"(// @kb problem allgather_fp32
// @kb launch gather grid(cdiv(N, 256), 2) block(256) args(peer(x, 0), peer(x, 1), out, N)
extern "C" __global__ void gather(const float* x0, const float* x1,
                                  float* out, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  out[blockIdx.y * N + i] = (blockIdx.y == 0 ? x0 : x1)[i];
}
)";

// Pushes its own shard into every rank's out (writes through peers).
constexpr char kPush[] = R"(// @kb problem allgather_fp32
// @kb launch push grid(cdiv(N, 256)) block(256) args(x, peer(out, 0), peer(out, 1), N, rank)
extern "C" __global__ void push(const float* x, float* out0, float* out1,
                                int N, int rank) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  out0[rank * N + i] = x[i];
  out1[rank * N + i] = x[i];
}
)";

// Right on rank 0, but rank 1 copies its own shard twice.
constexpr char kRank1Wrong[] = R"(// @kb problem allgather_fp32
// @kb launch gather grid(cdiv(N, 256), 2) block(256) args(peer(x, 0), peer(x, 1), x, out, N, rank)
extern "C" __global__ void gather(const float* x0, const float* x1,
                                  const float* mine, float* out, int N,
                                  int rank) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const float* src = blockIdx.y == 0 ? (rank == 0 ? x0 : mine) : x1;
  out[blockIdx.y * N + i] = src[i];
}
)";

// Right, and then writes into the peer's shard of x.
constexpr char kWritesPeerInput[] = R"(// @kb problem allgather_fp32
// @kb launch gather grid(cdiv(N, 256), 2) block(256) args(peer(x, 0), peer(x, 1), out, peer(x, 1 - rank), N)
extern "C" __global__ void gather(const float* x0, const float* x1,
                                  float* out, float* other, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  out[blockIdx.y * N + i] = (blockIdx.y == 0 ? x0 : x1)[i];
  if (i == 0 && blockIdx.y == 0) other[N - 1] = 0.0f;
}
)";

// Right, but its block is rank-dependent, and rank 1's exceeds the
// kernel's launch bounds: the GPU refuses rank 1's launch only, after rank
// 0's was enqueued.
constexpr char kRank1Refused[] = R"(// @kb problem allgather_fp32
// @kb launch gather grid(cdiv(N, 128), 2) block(128 * (rank + 1)) args(peer(x, 0), peer(x, 1), out, N)
extern "C" __global__ void __launch_bounds__(128)
    gather(const float* x0, const float* x1, float* out, int N) {
  const int i = blockIdx.x * 128 + threadIdx.x;
  if (i >= N || threadIdx.x >= 128) return;
  out[blockIdx.y * N + i] = (blockIdx.y == 0 ? x0 : x1)[i];
}
)";

class RankedCheckTest : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ProblemRegistry::Options only;
    only.only = {"allgather_fp32"};
    auto reg = ProblemRegistry::LoadDir(
        testing::SourcePath("tests/integration/problems"), only);
    ASSERT_TRUE(reg.ok()) << reg.status();
    registry_ = std::move(*reg);
    problem_ = *registry_->Find("allgather_fp32");
    ASSERT_TRUE(
        testing::AttachTrustedKernels(*problem_, ctx_->spec().arch(), &trusted_)
            .ok());
    auto eval = Evaluator::Create(ctx_.get());
    ASSERT_TRUE(eval.ok()) << eval.status();
    eval_ = std::move(*eval);
    eval_->set_rank_devices({0, 0});
  }

  // A check job as kbd builds it, at N = `n`.
  v1::RunnerJob Job(const std::string& source, int64_t n = 1000,
                    v1::JobKind kind = v1::JOB_KIND_CORRECTNESS) {
    v1::RunnerJob job = trusted_;
    job.set_job_id("ranked");
    job.set_kind(kind);
    *job.mutable_problem() = *problem_;
    job.set_world_size(problem_->world_size());
    job.set_source(source);
    job.set_filename("kernel.cu");
    absl::StatusOr<v1::LaunchPlan> plan = ParseLaunchPlan(source);
    EXPECT_TRUE(plan.ok()) << plan.status();
    if (plan.ok()) *job.mutable_plan() = *plan;
    job.set_source_digest(Sha256Hex(source));
    absl::StatusOr<CompileOutput> out =
        NvrtcCompiler().Compile(source, "kernel.cu", ctx_->spec().arch());
    EXPECT_TRUE(out.ok() && out->report.success()) << source;
    if (out.ok()) {
      job.set_cubin(out->cubin);
      job.set_cubin_arch(ctx_->spec().arch());
    }
    v1::ShapeSet* set = job.add_check_sets();
    set->set_name("default");
    v1::Shape* shape = set->add_shapes();
    shape->set_name(absl::StrCat("n", n));
    (*shape->mutable_dims())["N"] = n;
    job.set_trials(3);
    job.set_seed(++seed_);
    job.set_budget_ms(60000);
    if (kind == v1::JOB_KIND_SUBMIT || kind == v1::JOB_KIND_PROFILE) {
      job.set_timing_set("default");
      *job.mutable_timing_shape() = *shape;
      job.mutable_stopping()->set_min_samples(20);
      job.mutable_stopping()->set_max_time_ms(3000);
    }
    return job;
  }

  v1::JobResult Run(const v1::RunnerJob& job) {
    return testing::RunHealthy(eval_.get(), job);
  }

  std::unique_ptr<ProblemRegistry> registry_;
  const v1::Problem* problem_ = nullptr;
  v1::RunnerJob trusted_;
  std::unique_ptr<Evaluator> eval_;
  uint64_t seed_ = 7000;
};

TEST_F(RankedCheckTest, AKernelThatReadsItsPeersShardPasses) {
  for (int64_t n : {1000, 4096, 1}) {
    const v1::JobResult r = Run(Job(kPeerRead, n));
    EXPECT_EQ(r.verdict(), v1::VERDICT_PASSED) << n << ": " << r.message();
    EXPECT_EQ(r.correctness().trials_run(), 3);
    EXPECT_EQ(r.correctness().trials_passed(), 3);
  }
}

TEST_F(RankedCheckTest, AKernelThatWritesIntoItsPeersOutputPasses) {
  const v1::JobResult r = Run(Job(kPush));
  EXPECT_EQ(r.verdict(), v1::VERDICT_PASSED) << r.message();
}

TEST_F(RankedCheckTest, TheKernelThatReadsOnlyItsOwnShardFails) {
  const v1::JobResult r = Run(Job(problem_->example_source()));
  EXPECT_EQ(r.verdict(), v1::VERDICT_FAILED) << r.message();
  // Rank 0 writes its own shard where rank 1's belongs.
  EXPECT_THAT(r.message(), HasSubstr("rank 0 of 2: default/n1000"));
  EXPECT_EQ(r.correctness().trials(0).mismatches(), 1000);
}

TEST_F(RankedCheckTest, AWrongRankIsNamed) {
  const v1::JobResult r = Run(Job(kRank1Wrong));
  EXPECT_EQ(r.verdict(), v1::VERDICT_FAILED) << r.message();
  EXPECT_THAT(r.message(), HasSubstr("rank 1 of 2"));
}

TEST_F(RankedCheckTest, WritingIntoAPeersInputIsRejected) {
  const v1::JobResult r = Run(Job(kWritesPeerInput));
  EXPECT_EQ(r.verdict(), v1::VERDICT_REJECTED) << r.message();
  EXPECT_THAT(r.message(), HasSubstr("modified input 'x'"));
  // Rank 1 wrote into rank 0's copy (checked first).
  EXPECT_THAT(r.message(), HasSubstr("rank 0's copy"));
  // The runner is fine afterwards.
  EXPECT_EQ(Run(Job(kPeerRead)).verdict(), v1::VERDICT_PASSED);
}

TEST_F(RankedCheckTest, ALaunchRefusedOnOneRankIsRejected) {
  const v1::JobResult r = Run(Job(kRank1Refused));
  EXPECT_EQ(r.verdict(), v1::VERDICT_REJECTED) << r.message();
  EXPECT_THAT(r.message(), HasSubstr("launching 'gather'"));
  // Rank 0's run finished before the error unwound: the runner is fine.
  EXPECT_EQ(Run(Job(kPeerRead)).verdict(), v1::VERDICT_PASSED);
}

// A profile times as a submit does, then counts rank 0's plan alone, its
// peer's shard in place, beside rank 0's baseline.
TEST_F(RankedCheckTest, AProfileCountsRankZeroAlone) {
  ctx_->mutable_spec()->set_datasheet_memory_gbps(3350);
  v1::RunnerJob job = Job(kPeerRead, 1 << 20, v1::JOB_KIND_PROFILE);
  job.set_profile_preset("full");
  const v1::JobResult r = Run(job);
  ASSERT_EQ(r.verdict(), v1::VERDICT_PASSED) << r.message();
  const v1::ProfileReport& p = r.profile();
  EXPECT_EQ(p.rank(), 0);
  EXPECT_EQ(p.world_size(), 2);
  // The timing is the submit's, on both ranks.
  EXPECT_GE(p.timing().kernel().n(), 20);
  EXPECT_GT(p.timing().kernel_gpu().n(), 0) << p.timing().gpu_time_note();
  EXPECT_EQ(r.timing().kernel().median_us(), p.timing().kernel().median_us());
  ASSERT_EQ(p.launches_size(), 1);
  EXPECT_EQ(p.launches(0).entry(), "gather");
  EXPECT_GT(p.total().median_us(), 0);
  // Rank 0's share of the 16 MiB the two ranks move at least.
  EXPECT_DOUBLE_EQ(p.min_bytes(), 8.0 * (1 << 20));
  ASSERT_TRUE(p.counters_unavailable().empty()) << p.counters_unavailable();
  const v1::CounterProfile& c = p.launches(0).counters();
  // Both 4 MiB shards read once, from a cold L2 (on one GPU the peer's
  // shard is local memory).
  EXPECT_GT(c.dram_read_bytes(), 0.9 * (8 << 20));
  EXPECT_LT(c.dram_read_bytes(), 1.2 * (8 << 20));
  // Rank 0's baseline: the gather by peer reads, then the copy.
  EXPECT_EQ(p.reference_launches_size(), 2);
  // PC sampling loaded a fresh copy bound to the peer's shard; the per-line
  // load counts, which run in a child without the peers, say why not.
  bool line_loads_said = false;
  for (const v1::MissingFigure& m : p.missing()) {
    EXPECT_NE(m.figure(), "hot_lines") << m.reason();
    if (m.figure() == "hot_lines.global_load_sectors_per_request") {
      EXPECT_THAT(m.reason(), HasSubstr("without the peers of rank 0"));
      line_loads_said = true;
    }
  }
  EXPECT_TRUE(line_loads_said);
  std::printf(
      "profiled rank 0 of 2: %d launches, total %.2f us, DRAM read %.0f "
      "bytes, %d passes, %lld PC samples, %d hot lines\n",
      p.launches_size(), p.total().median_us(), c.dram_read_bytes(), p.passes(),
      static_cast<long long>(p.pc_samples()), p.hot_lines_size());
}

// kbworker runs a sanitize job under compute-sanitizer; in the runner it
// is the check on every rank.
TEST_F(RankedCheckTest, ASanitizeJobIsTheCheckOnEveryRank) {
  v1::JobResult r = Run(Job(kPeerRead, 1000, v1::JOB_KIND_SANITIZE));
  EXPECT_EQ(r.verdict(), v1::VERDICT_PASSED) << r.message();
  EXPECT_EQ(r.correctness().trials_run(), 3);
  r = Run(Job(problem_->example_source(), 1000, v1::JOB_KIND_SANITIZE));
  EXPECT_EQ(r.verdict(), v1::VERDICT_FAILED) << r.message();
}

TEST_F(RankedCheckTest, ASubmitIsTimedAgainstTheBaselineOnEveryRank) {
  // kbrunner measures the GPU's ceilings at start; this context has none.
  ctx_->mutable_spec()->set_datasheet_memory_gbps(3350);
  const v1::JobResult r = Run(Job(kPeerRead, 1 << 20, v1::JOB_KIND_SUBMIT));
  ASSERT_EQ(r.verdict(), v1::VERDICT_PASSED) << r.message();
  // Three visible trials and two hidden seeds, on both ranks.
  EXPECT_EQ(r.correctness().trials_run(), 5);
  EXPECT_EQ(r.manifest().hidden_trials(), 2);
  EXPECT_EQ(r.manifest().seeds_size(), 3);
  const v1::TimingReport& t = r.timing();
  EXPECT_EQ(t.shape(), "n1048576");
  EXPECT_GE(t.kernel().n(), 20);
  EXPECT_GE(t.reference().n(), 20);
  EXPECT_GT(t.kernel().median_us(), 0);
  EXPECT_GT(t.reference().median_us(), 0);
  // CUPTI's records of both ranks, joined: the speedup's basis.
  EXPECT_GT(t.kernel_gpu().n(), 0) << t.gpu_time_note();
  EXPECT_GT(t.reference_gpu().n(), 0) << t.gpu_time_note();
  EXPECT_EQ(t.speedup_basis(), v1::TIMING_BASIS_GPU_TIME);
  EXPECT_NEAR(t.speedup(),
              t.reference_gpu().median_us() / t.kernel_gpu().median_us(), 1e-9);
  // NCCL refuses two ranks on one GPU: the peer reads stand in, and say
  // why.
  EXPECT_THAT(t.reference_name(),
              HasSubstr("[all-gather by peer reads, standing in for NCCL (two "
                        "ranks share a GPU, which NCCL refuses)]"));
  // The baseline: one gather kernel and the copy, per rank.
  EXPECT_EQ(t.reference_launches(), 2);
  EXPECT_EQ(t.kernel_launches(), 1);
  EXPECT_TRUE(t.l2_flushed());
  // 16 MiB the two ranks move at least, on two GPUs' bandwidth: the floor.
  EXPECT_NEAR(t.floor_us(), 8.0 * (1 << 20) / 3350e3, 1e-6);
  EXPECT_GT(t.kernel().median_us(), t.floor_us());
  // Each rank's own span, on both bases, within the joined one.
  ASSERT_EQ(t.ranks_size(), 2);
  for (const v1::RankTiming& mine : t.ranks()) {
    EXPECT_EQ(mine.kernel().n(), t.kernel().n());
    EXPECT_LE(mine.kernel().median_us(), t.kernel().median_us());
    EXPECT_LE(mine.reference().median_us(), t.reference().median_us());
    ASSERT_EQ(mine.kernel_gpu().n(), t.kernel_gpu().n());
    EXPECT_GT(mine.kernel_gpu().median_us(), 0);
    EXPECT_LE(mine.kernel_gpu().median_us(), t.kernel_gpu().median_us());
    EXPECT_LE(mine.reference_gpu().median_us(), t.reference_gpu().median_us());
    std::printf("rank %d's own span: kernel %.2f us (GPU), baseline %.2f us\n",
                mine.rank(), mine.kernel_gpu().median_us(),
                mine.reference_gpu().median_us());
  }
  std::printf(
      "timed on 2 ranks: kernel %.2f us (events) %.2f us (GPU), baseline "
      "%.2f us (events) %.2f us (GPU), %d samples, stop: %s\n",
      t.kernel().median_us(), t.kernel_gpu().median_us(),
      t.reference().median_us(), t.reference_gpu().median_us(), t.kernel().n(),
      t.stop_reason().c_str());
}

// Right on the first calls, then skips its work: the check passes, the
// timed runs' output does not.
constexpr char kLazy[] = R"(// @kb problem allgather_fp32
// @kb launch gather grid(cdiv(N, 256), 2) block(256) args(peer(x, 0), peer(x, 1), out, N)
__device__ unsigned calls;
extern "C" __global__ void gather(const float* x0, const float* x1,
                                  float* out, int N) {
  if (calls > 12) return;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0 && blockIdx.y == 0) atomicAdd(&calls, 1);
  if (i >= N) return;
  out[blockIdx.y * N + i] = (blockIdx.y == 0 ? x0 : x1)[i];
}
)";

TEST_F(RankedCheckTest, AKernelThatStopsWorkingWhileTimedFailsItsSubmit) {
  const v1::JobResult r = Run(Job(kLazy, 4096, v1::JOB_KIND_SUBMIT));
  EXPECT_EQ(r.verdict(), v1::VERDICT_FAILED) << r.message();
  EXPECT_THAT(r.message(), HasSubstr("the output of the timed runs was wrong"));
  EXPECT_TRUE(r.correctness().passed());
}

TEST_F(RankedCheckTest, TheOwnShardKernelFailsItsSubmitBeforeTiming) {
  const v1::JobResult r =
      Run(Job(problem_->example_source(), 1000, v1::JOB_KIND_SUBMIT));
  EXPECT_EQ(r.verdict(), v1::VERDICT_FAILED) << r.message();
  EXPECT_EQ(r.timing().kernel().n(), 0);
}

TEST_F(RankedCheckTest, MoreRanksThanVisibleGpusIsAClearError) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  if (count >= 2) GTEST_SKIP() << "two GPUs are visible";
  eval_->set_rank_devices({});  // Rank 1 on device 1, which is not there.
  const v1::JobResult r = Run(Job(kPeerRead));
  EXPECT_EQ(r.verdict(), v1::VERDICT_ERROR) << r.message();
  EXPECT_THAT(r.message(), HasSubstr("rank 1's device 1 is not among the 1"));
}

}  // namespace
}  // namespace kbench
