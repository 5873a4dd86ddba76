// End to end on a real GPU: kbd with one local worker (kbworker + kbrunner),
// driven over gRPC as an agent would. Skips without an NVIDIA GPU.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "kbench/v1/worker.pb.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::kbench::testing::KbdProcess;
using ::kbench::testing::ReadSourceFile;

class GpuE2eTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::HasGpu()) return;
    auto kbd = KbdProcess::Start({{"--local-worker=1"}, ""});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = kbd->release();
    stub_ = v1::Kbench::NewStub(
                grpc::CreateChannel(kbd_->address(),
                                    grpc::InsecureChannelCredentials()))
                .release();
    // Wait for the local worker (runner start creates the CUDA context).
    for (int i = 0; i < 600; ++i) {
      v1::GetGpuSpecsRequest req;
      v1::GetGpuSpecsResponse resp;
      grpc::ClientContext ctx;
      if (stub_->GetGpuSpecs(&ctx, req, &resp).ok() && resp.gpus_size() > 0) {
        spec_ = new v1::GpuSpec(resp.gpus(0).spec());
        return;
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
    FAIL() << "the local worker did not connect; kbd log:\n" << kbd_->Log();
  }
  static void TearDownTestSuite() {
    delete stub_;
    delete spec_;
    delete kbd_;
  }
  void SetUp() override { KB_SKIP_WITHOUT_GPU(); }

  static v1::KernelRequest Kernel(const std::string& path,
                                  const std::string& shape_set = "",
                                  int budget_ms = 0) {
    v1::KernelRequest k;
    k.set_source(ReadSourceFile(path));
    k.set_filename(path.substr(path.rfind('/') + 1));
    k.set_shape_set(shape_set);
    k.set_budget_ms(budget_ms);
    return k;
  }
  static grpc::Status Check(const v1::KernelRequest& k,
                            v1::RunCorrectnessResponse* resp) {
    v1::RunCorrectnessRequest req;
    *req.mutable_kernel() = k;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(120));
    return stub_->RunCorrectness(&ctx, req, resp);
  }
  static void ExpectNaivePasses(const std::string& why) {
    v1::RunCorrectnessResponse resp;
    ASSERT_TRUE(
        Check(Kernel("kernels/examples/gather_linear_naive.cu"), &resp).ok());
    EXPECT_EQ(resp.result().verdict(), v1::VERDICT_PASSED) << why;
  }

  static KbdProcess* kbd_;
  static v1::Kbench::Stub* stub_;
  static v1::GpuSpec* spec_;
};

KbdProcess* GpuE2eTest::kbd_ = nullptr;
v1::Kbench::Stub* GpuE2eTest::stub_ = nullptr;
v1::GpuSpec* GpuE2eTest::spec_ = nullptr;

TEST_F(GpuE2eTest, SpecsDescribeTheGpu) {
  EXPECT_GT(spec_->sm_count(), 0);
  EXPECT_GT(spec_->l2_bytes(), 0);
  EXPECT_GT(spec_->memory_bytes(), 0);
  EXPECT_EQ(spec_->arch(),
            absl::StrCat("sm_", spec_->cc_major(), spec_->cc_minor()));
  EXPECT_GT(spec_->smem_per_block_optin_bytes(), spec_->smem_per_block_bytes());
  // Ceilings measured when the runner started.
  EXPECT_GT(spec_->measured_copy_gbps(), 300);
  EXPECT_GT(spec_->measured_fp32_tflops(), 5);
}

TEST_F(GpuE2eTest, NaiveKernelPassesEveryTrial) {
  v1::RunCorrectnessResponse resp;
  ASSERT_TRUE(
      Check(Kernel("kernels/examples/gather_linear_naive.cu"), &resp).ok());
  const v1::CorrectnessReport& c = resp.result().correctness();
  EXPECT_EQ(resp.result().verdict(), v1::VERDICT_PASSED)
      << resp.result().message();
  // default (1 shape) + odd (5 shapes), 5 trials each.
  EXPECT_EQ(c.trials_run(), 30);
  EXPECT_EQ(c.trials_passed(), 30);
  for (const v1::TrialResult& t : c.trials()) {
    EXPECT_LT(t.rel_norm_error(), 1e-6) << t.shape_set() << "/" << t.shape();
    EXPECT_EQ(t.nan_count(), 0);
    EXPECT_GT(t.elements(), 0);
  }
  // Fresh seeds: no two trials share one.
  std::set<uint64_t> seeds;
  for (const v1::TrialResult& t : c.trials()) seeds.insert(t.seed());
  EXPECT_EQ(seeds.size(), 30u);
}

TEST_F(GpuE2eTest, Bf16NaiveKernelPasses) {
  v1::RunCorrectnessResponse resp;
  ASSERT_TRUE(
      Check(Kernel("kernels/examples/gather_linear_naive_bf16.cu"), &resp)
          .ok());
  EXPECT_EQ(resp.result().verdict(), v1::VERDICT_PASSED)
      << resp.result().message();
  for (const v1::TrialResult& t : resp.result().correctness().trials()) {
    EXPECT_LT(t.rel_norm_error(), 8e-3);
  }
}

TEST_F(GpuE2eTest, TwoStageKernelPassesOnTheLargeShape) {
  v1::RunCorrectnessResponse resp;
  v1::KernelRequest k =
      Kernel("kernels/examples/gather_linear_two_stage.cu", "large");
  k.set_trials(1);
  ASSERT_TRUE(Check(k, &resp).ok());
  EXPECT_EQ(resp.result().verdict(), v1::VERDICT_PASSED)
      << resp.result().message();
  ASSERT_EQ(resp.result().correctness().trials_size(), 1);
  EXPECT_EQ(resp.result().correctness().trials(0).elements(), 4096LL * 4096);
}

TEST_F(GpuE2eTest, WrongKernelFailsWithItsErrorFigures) {
  v1::RunCorrectnessResponse resp;
  ASSERT_TRUE(Check(Kernel("tests/gpu/kernels/wrong_no_bias.cu"), &resp).ok());
  EXPECT_EQ(resp.result().verdict(), v1::VERDICT_FAILED);
  const v1::TrialResult& t = resp.result().correctness().trials(0);
  EXPECT_FALSE(t.passed());
  EXPECT_GT(t.max_abs_error(), 1e-3);
  EXPECT_GT(t.mismatches(), 0);
  EXPECT_FALSE(t.first_mismatch().empty());
  EXPECT_NE(resp.result().message().find("outside tolerance"),
            std::string::npos)
      << resp.result().message();
}

TEST_F(GpuE2eTest, BadPointerCrashesAndTheNextJobPasses) {
  v1::RunCorrectnessResponse resp;
  ASSERT_TRUE(Check(Kernel("tests/gpu/kernels/bad_pointer.cu"), &resp).ok());
  EXPECT_EQ(resp.result().verdict(), v1::VERDICT_CRASHED);
  EXPECT_NE(resp.result().message().find("illegal"), std::string::npos)
      << resp.result().message();
  ExpectNaivePasses("after a crash");
}

TEST_F(GpuE2eTest, TrapCrashesAndTheNextJobPasses) {
  v1::RunCorrectnessResponse resp;
  ASSERT_TRUE(Check(Kernel("tests/gpu/kernels/trap.cu"), &resp).ok());
  EXPECT_EQ(resp.result().verdict(), v1::VERDICT_CRASHED)
      << resp.result().message();
  ExpectNaivePasses("after a trap");
}

TEST_F(GpuE2eTest, InfiniteLoopTimesOutWithinItsBudget) {
  const absl::Time t0 = absl::Now();
  v1::RunCorrectnessResponse resp;
  ASSERT_TRUE(
      Check(Kernel("tests/gpu/kernels/infinite_loop.cu", "", 2000), &resp)
          .ok());
  const absl::Duration took = absl::Now() - t0;
  EXPECT_EQ(resp.result().verdict(), v1::VERDICT_TIMED_OUT);
  // 2 s budget + 1 s watchdog grace; the rest is generous slack.
  EXPECT_LT(took, absl::Seconds(15)) << absl::FormatDuration(took);
  ExpectNaivePasses("after a timeout");
}

TEST_F(GpuE2eTest, WrongSignatureIsRejectedWithThePrototype) {
  v1::RunCorrectnessResponse resp;
  const grpc::Status s =
      Check(Kernel("tests/gpu/kernels/wrong_signature.cu"), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("int K"), std::string::npos)
      << s.error_message();
  ExpectNaivePasses("after a rejection");
}

TEST_F(GpuE2eTest, SubmitTimesKernelAndReference) {
  v1::SubmitKernelRequest req;
  *req.mutable_kernel() = Kernel("kernels/examples/gather_linear_naive.cu");
  v1::SubmitKernelResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub_->SubmitKernel(&ctx, req, &resp).ok());
  const v1::JobResult& r = resp.result();
  EXPECT_EQ(r.verdict(), v1::VERDICT_PASSED) << r.message();
  const v1::TimingReport& t = r.timing();
  EXPECT_GE(t.kernel().n(), 20);
  EXPECT_GE(t.reference().n(), 20);
  EXPECT_GT(t.kernel().median_us(), 0.5);  // A real kernel, in us, not ms.
  EXPECT_LT(t.kernel().median_us(), 10000);
  EXPECT_GT(t.reference().median_us(), 0.5);
  // Three bases: events, GPU time (CUPTI) and graph replay; the speedup
  // is on GPU time, and each basis's speedup divides its own medians.
  EXPECT_NEAR(t.speedup_events(),
              t.reference().median_us() / t.kernel().median_us(), 1e-9);
  ASSERT_GE(t.kernel_gpu().n(), 20);
  ASSERT_GE(t.reference_gpu().n(), 20);
  EXPECT_EQ(t.speedup_basis(), v1::TIMING_BASIS_GPU_TIME);
  EXPECT_NEAR(t.speedup(),
              t.reference_gpu().median_us() / t.kernel_gpu().median_us(), 1e-9);
  EXPECT_DOUBLE_EQ(t.speedup(), t.speedup_gpu());
  // GPU time has no launch cost: below the events' figure on both sides.
  EXPECT_LT(t.kernel_gpu().median_us(), t.kernel().median_us());
  EXPECT_LT(t.reference_gpu().median_us(), t.reference().median_us());
  ASSERT_GE(t.kernel_graph().n(), 5);
  ASSERT_GE(t.reference_graph().n(), 5);
  EXPECT_GE(t.graph_runs(), 2);
  EXPECT_GT(t.kernel_graph().median_us(), 0.5);
  EXPECT_LT(t.kernel_graph().median_us(), t.kernel().median_us());
  // Every replayed run is a sample (7 timed replays), timed by CUPTI with
  // no event nodes in the graph: a one-launch plan's steady state is its
  // kernel's GPU time (event nodes added ~2 us, +16 %, on the H200).
  EXPECT_EQ(t.kernel_graph().n(), 7 * t.graph_runs());
  EXPECT_NEAR(t.kernel_graph().median_us(), t.kernel_gpu().median_us(),
              0.1 * t.kernel_gpu().median_us());
  EXPECT_NEAR(t.speedup_graph(),
              t.reference_graph().median_us() / t.kernel_graph().median_us(),
              1e-9);
  EXPECT_EQ(t.kernel_launches(), 1);
  EXPECT_GE(t.reference_launches(), 2);  // concat + GEMM.
  EXPECT_TRUE(t.l2_flushed());
  EXPECT_FALSE(t.stop_reason().empty());
  // Memory: R*B*H + K*R*H + K + B*K floats at the default shape, no
  // workspace; the reference adds its gathered copy and cuBLASLt workspace.
  EXPECT_EQ(t.kernel_memory_bytes(),
            4 * (4 * 12 * 32 + 56 * 128 + 56 + 12 * 56));
  EXPECT_GT(t.reference_memory_bytes(), t.kernel_memory_bytes());
  EXPECT_DOUBLE_EQ(t.flops(), 2.0 * 12 * 56 * 4 * 32);
  EXPECT_GT(t.min_bytes(), 0);
}

TEST_F(GpuE2eTest, ProfileReportsEachLaunch) {
  v1::ProfileKernelRequest req;
  *req.mutable_kernel() = Kernel("kernels/examples/gather_linear_two_stage.cu");
  v1::ProfileKernelResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub_->ProfileKernel(&ctx, req, &resp).ok());
  const v1::ProfileReport& p = resp.result().profile();
  EXPECT_EQ(resp.result().verdict(), v1::VERDICT_PASSED)
      << resp.result().message();
  // Workspace zero-fill + two launches.
  ASSERT_EQ(p.launches_size(), 3);
  EXPECT_EQ(p.launches(1).entry(), "gather_rows");
  EXPECT_EQ(p.launches(2).entry(), "linear_rows");
  double share = 0;
  for (const v1::LaunchProfile& l : p.launches()) share += l.share_pct();
  EXPECT_NEAR(share, 100.0, 0.5);
  EXPECT_GT(p.launches(2).registers(), 0);
  EXPECT_GT(p.launches(2).theoretical_occupancy_pct(), 0);
  EXPECT_EQ(p.launches(2).reserved_smem_bytes(),
            spec_->reserved_smem_per_block_bytes());
  EXPECT_GT(p.total().median_us(), 0);
  EXPECT_GT(p.achieved_gbps(), 0);
  // Hardware counters for both kernels and the reference's kernels.
  ASSERT_TRUE(p.counters_unavailable().empty()) << p.counters_unavailable();
  EXPECT_EQ(p.preset(), "full");
  EXPECT_FALSE(p.launches(0).has_counters());  // The zero-fill memset.
  for (int i = 1; i <= 2; ++i) {
    const v1::CounterProfile& c = p.launches(i).counters();
    EXPECT_GT(c.gpu_time_us(), 0) << p.launches(i).entry();
    EXPECT_GT(c.global_load_requests(), 0) << p.launches(i).entry();
    EXPECT_FALSE(p.launches(i).top_stalls().empty()) << p.launches(i).entry();
  }
  EXPECT_GE(p.reference_launches_size(), 2);  // concat + GEMM.
  // Nothing is missing: PC sampling and the per-line loads (SASS metrics)
  // cover both kernels.
  for (const v1::MissingFigure& m : p.missing()) {
    ADD_FAILURE() << m.figure() << ": " << m.reason();
  }
  EXPECT_GT(p.pc_samples(), 0);
  int64_t line_requests = 0;
  bool gather_line = false, dot_line = false;
  for (const v1::SourceLine& h : p.hot_lines()) {
    line_requests += h.global_load_requests();
    if (h.global_load_requests() == 0) continue;
    gather_line |= absl::StrContains(h.text(), "gathered[");
    dot_line |= absl::StrContains(h.text(), "acc += g[j] * wk[j]");
  }
  EXPECT_TRUE(gather_line && dot_line) << p.DebugString();
  EXPECT_LE(line_requests, p.launches(1).counters().global_load_requests() +
                               p.launches(2).counters().global_load_requests());
  EXPECT_GT(p.headroom().floor_us(), 0);
  EXPECT_FALSE(p.roofline().bound().empty());
}

TEST_F(GpuE2eTest, FastPresetReadsFewerCountersInFewerPasses) {
  auto profile = [](const std::string& preset) {
    v1::ProfileKernelRequest req;
    *req.mutable_kernel() = Kernel("kernels/examples/gather_linear_naive.cu");
    req.mutable_kernel()->set_profile_preset(preset);
    v1::ProfileKernelResponse resp;
    grpc::ClientContext ctx;
    EXPECT_TRUE(stub_->ProfileKernel(&ctx, req, &resp).ok());
    return resp.result().profile();
  };
  const v1::ProfileReport fast = profile("fast");
  const v1::ProfileReport full = profile("full");
  EXPECT_EQ(fast.preset(), "fast");
  ASSERT_TRUE(fast.counters_unavailable().empty())
      << fast.counters_unavailable();
  EXPECT_LT(fast.passes(), full.passes());
  EXPECT_GT(fast.launches(0).counters().global_load_sectors(), 0);
  EXPECT_TRUE(fast.launches(0).top_stalls().empty());
  bool stalls_missing = false;
  for (const v1::MissingFigure& m : fast.missing()) {
    if (m.figure() == "top_stalls") stalls_missing = true;
  }
  EXPECT_TRUE(stalls_missing) << fast.DebugString();

  v1::ProfileKernelRequest bad;
  *bad.mutable_kernel() = Kernel("kernels/examples/gather_linear_naive.cu");
  bad.mutable_kernel()->set_profile_preset("everything");
  v1::ProfileKernelResponse resp;
  grpc::ClientContext ctx;
  const grpc::Status s = stub_->ProfileKernel(&ctx, bad, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("fast"), std::string::npos);
}

// `kbrunner --topology` (kbworker runs it at start): one link per other
// visible GPU, with a measured copy wherever peer access is possible; a
// GPU that is not there is refused. On a one-GPU machine there are no
// links.
TEST(KbrunnerTopologyTest, ReportsOneLinkPerOtherVisibleGpu) {
  if (!testing::HasGpu()) GTEST_SKIP() << "no NVIDIA GPU";
  testing::TempDir dir;
  const std::string file = dir.path() + "/topology.pb";
  const testing::CommandResult r = testing::RunCommand(
      {testing::BinDir() + "/kbrunner", "--topology", file, "--device", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(file, std::ios::binary);
  v1::RunnerTopology topology;
  ASSERT_TRUE(topology.ParseFromIstream(&in));
  ASSERT_GE(topology.device_count(), 1);
  EXPECT_EQ(topology.links_size(), topology.device_count() - 1);
  std::set<int> peers;
  for (const v1::GpuLink& l : topology.links()) {
    EXPECT_NE(l.peer_gpu_index(), 0);
    EXPECT_TRUE(peers.insert(l.peer_gpu_index()).second);
    EXPECT_EQ(l.copy_gbps() > 0, l.peer_access()) << l.DebugString();
  }
  const testing::CommandResult missing = testing::RunCommand(
      {testing::BinDir() + "/kbrunner", "--topology", file, "--device",
       std::to_string(topology.device_count())});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_TRUE(absl::StrContains(missing.err, "is not one of the"))
      << missing.err;
}

}  // namespace
}  // namespace kbench
