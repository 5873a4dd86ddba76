// The runner's measurement objects and harness on a real GPU: EventTimer,
// L2Flusher, StreamBlocker, InterleavedSampler and the seeded input
// generator. Skips without an NVIDIA GPU.
#include <cuda_runtime_api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kbench/v1/problem.pb.h"
#include "runner/device/ceilings.h"
#include "runner/device/device_context.h"
#include "runner/device/event_timer.h"
#include "runner/device/harness_kernels.h"
#include "runner/device/l2_flusher.h"
#include "runner/device/stream_blocker.h"
#include "runner/profile/kernel_activity.h"
#include "runner/timing/graph_replay.h"
#include "runner/timing/interleaved_sampler.h"
#include "testing/process.h"
#include "tests/gpu/device_test.h"

namespace kbench {
namespace {

using MeasureTest = DeviceTest;

// Reads `bytes` of a buffer: a simple bandwidth-bound kernel stand-in.
absl::Status ReadBuffer(DeviceBuffer& src, DeviceBuffer& dst, cudaStream_t s) {
  return cudaMemcpyAsync(dst.get(), src.get(), src.bytes(),
                         cudaMemcpyDeviceToDevice, s) == cudaSuccess
             ? absl::OkStatus()
             : absl::InternalError("copy");
}

TEST_F(MeasureTest, EventTimerMeasuresGpuTime) {
  auto timer = EventTimer::Create(2);
  ASSERT_TRUE(timer.ok());
  auto a = DeviceBuffer::Allocate(256 << 20);
  auto b = DeviceBuffer::Allocate(256 << 20);
  ASSERT_TRUE(a.ok() && b.ok());
  cudaStream_t s = ctx_->stream();
  ASSERT_TRUE((*timer)->Start(0, s).ok());
  ASSERT_TRUE((*timer)->Stop(0, s).ok());
  ASSERT_TRUE((*timer)->Start(1, s).ok());
  ASSERT_TRUE(ReadBuffer(*a, *b, s).ok());
  ASSERT_TRUE((*timer)->Stop(1, s).ok());
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  const double empty = (*timer)->ElapsedUs(0).value();
  const double copy = (*timer)->ElapsedUs(1).value();
  EXPECT_GE(empty, 0);
  EXPECT_LT(empty, 50);
  // 512 MiB moved (read + write); even at 10 TB/s that is > 50 us.
  EXPECT_GT(copy, 50);
  EXPECT_GT(copy, 10 * empty);
}

// That the L2 flush leaves the next read cold is checked on DRAM bytes, by
// CounterProfilerTest.FlushBetweenTwoReadsMakesTheSecondCold: a timing
// comparison of a hot and a cold read failed about one fresh run in six.

TEST_F(MeasureTest, StreamBlockerHoldsTheStreamUntilReleased) {
  auto blocker = StreamBlocker::Create(5000);
  ASSERT_TRUE(blocker.ok());
  cudaStream_t s = ctx_->stream();
  ASSERT_TRUE((*blocker)->Block(s).ok());
  cudaEvent_t e;
  cudaEventCreate(&e);
  cudaEventRecord(e, s);
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(cudaEventQuery(e), cudaErrorNotReady);  // Still held.
  (*blocker)->Release();
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_FALSE((*blocker)->TimedOut());
  // Without a release, the blocker gives up after its timeout.
  auto short_blocker = StreamBlocker::Create(20);
  ASSERT_TRUE((*short_blocker)->Block(s).ok());
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_TRUE((*short_blocker)->TimedOut());
  cudaEventDestroy(e);
}

absl::Status Spin(uint64_t ns, cudaStream_t s) {
  return LaunchSpinFor(ns, s) == cudaSuccess ? absl::OkStatus()
                                             : absl::InternalError("spin");
}

TEST_F(MeasureTest, EventTimerMatchesAKnownDuration) {
  auto timer = EventTimer::Create(1);
  cudaStream_t s = ctx_->stream();
  ASSERT_TRUE(Spin(1000, s).ok());  // Load the kernel first.
  ASSERT_TRUE((*timer)->Start(0, s).ok());
  ASSERT_TRUE(Spin(200000, s).ok());  // 200 us of GPU time.
  ASSERT_TRUE((*timer)->Stop(0, s).ok());
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  const double us = (*timer)->ElapsedUs(0).value();
  EXPECT_GE(us, 199.0);
  EXPECT_LT(us, 230.0);
}

TEST_F(MeasureTest, KernelActivityTimesTheKernelItself) {
  cudaStream_t s = ctx_->stream();
  ASSERT_TRUE(Spin(1000, s).ok());  // Load the kernel first.
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  KernelActivity activity;
  const absl::Status started = activity.Start();
  ASSERT_TRUE(started.ok()) << started;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Spin(200000, s).ok());  // 200 us.
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  absl::StatusOr<std::vector<KernelActivity::Record>> records = activity.Stop();
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 3u);
  std::set<std::string> names;
  for (const KernelActivity::Record& r : *records) {
    names.insert(r.name);
    EXPECT_GE(r.duration_us(), 199.0) << r.name;
    EXPECT_LT(r.duration_us(), 215.0) << r.name;
    // The front end's stamp, which a run's span starts from (0.5 us on the
    // H200).
    EXPECT_GT(r.submitted_ns, 0u) << r.name;
    EXPECT_LE(r.submitted_ns, r.start_ns) << r.name;
    EXPECT_LT(r.start_ns - r.submitted_ns, kMaxFrontEndNs) << r.name;
  }
  const std::vector<double> runs = RunSpansUs(
      *records, [&](const std::string& n) { return names.count(n) > 0; }, 1, 1);
  ASSERT_EQ(runs.size(), 2u);  // The first run is dropped as warm-up.
  EXPECT_GE(runs[0], 199.0);
}

// Under Nsight Compute CUPTI is the tool's: kernel activity stands aside
// (ncu stopped the runner at the first timed launch while both held it).
// Needs no GPU: the check comes before any CUPTI call.
TEST(KernelActivityTest, StandsAsideForAnInjectedTool) {
  ASSERT_EQ(std::getenv("CUDA_INJECTION64_PATH"), nullptr);
  setenv("CUDA_INJECTION64_PATH", "/nonexistent/libtool.so", 1);
  KernelActivity activity;
  const absl::Status started = activity.Start();
  unsetenv("CUDA_INJECTION64_PATH");
  EXPECT_EQ(started.code(), absl::StatusCode::kUnavailable) << started;
  EXPECT_THAT(std::string(started.message()),
              ::testing::HasSubstr("CUDA_INJECTION64_PATH"));
  EXPECT_FALSE(activity.Stop().ok());
}

// A graph of N runs of a kernel of known duration gives N samples per
// replay, each that duration: hot (back to back) and cold (each run after a
// flush, which lies outside the run's event pair).
TEST_F(MeasureTest, GraphReplayGivesTheTimePerRun) {
  cudaStream_t s = ctx_->stream();
  ASSERT_TRUE(Spin(1000, s).ok());
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  auto flusher = L2Flusher::Create(ctx_->spec().l2_bytes());
  ASSERT_TRUE(flusher.ok());
  for (L2Flusher* f : {static_cast<L2Flusher*>(nullptr), flusher->get()}) {
    auto graph = GraphReplay::Capture(
        ctx_.get(), [&] { return Spin(50000, s); }, f, {/*runs=*/20});
    ASSERT_TRUE(graph.ok()) << graph.status();
    EXPECT_EQ((*graph)->runs(), 20);
    std::vector<double> us;
    for (int i = 0; i < 4; ++i) {
      absl::StatusOr<std::vector<double>> t = (*graph)->Replay();
      ASSERT_TRUE(t.ok()) << t.status();
      ASSERT_EQ(t->size(), 20u);
      if (i >= 1) us.insert(us.end(), t->begin(), t->end());
    }
    std::sort(us.begin(), us.end());
    std::cout << (f ? "cold" : "hot") << ": 50 us spin, per run in a graph: "
              << "min " << us.front() << " us, median " << us[us.size() / 2]
              << " us, max " << us.back() << " us\n";
    // 50 us of spinning per run, plus a little launch gap inside the graph;
    // a flush (~60 us on the H200) counted in would show at once.
    EXPECT_GE(us.front(), 49.0) << (f ? "cold" : "hot");
    EXPECT_LT(us[us.size() / 2], 54.0) << (f ? "cold" : "hot");
  }
  // A workload that synchronizes cannot be captured, and says so.
  auto sync = GraphReplay::Capture(
      ctx_.get(),
      [&]() -> absl::Status {
        return cudaStreamSynchronize(s) == cudaSuccess
                   ? absl::OkStatus()
                   : absl::InternalError("sync refused in capture");
      },
      nullptr, {2});
  EXPECT_EQ(sync.status().code(), absl::StatusCode::kFailedPrecondition);
  // The stream still works after the failed capture.
  ASSERT_TRUE(Spin(1000, s).ok());
  EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
}

TEST_F(MeasureTest, InterleavedSamplerTimesEachWorkloadSeparately) {
  auto flusher = L2Flusher::Create(ctx_->spec().l2_bytes());
  auto blocker = StreamBlocker::Create();
  cudaStream_t s = ctx_->stream();
  InterleavedSampler::Options opt;
  opt.stop.max_time_ms = 500;
  InterleavedSampler sampler(ctx_.get(), flusher->get(), blocker->get(), opt);
  auto result = sampler.Run({{"20us", [&] { return Spin(20000, s); }},
                             {"100us", [&] { return Spin(100000, s); }}});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->samples_us.size(), 2u);
  ASSERT_GE(result->samples_us[0].size(), 20u);
  ASSERT_EQ(result->samples_us[0].size(), result->samples_us[1].size());
  std::vector<double> a = result->samples_us[0], b = result->samples_us[1];
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  // Each workload's own time: not the flush (~40 us), not the other
  // workload, not a host launch gap (the blocker queues them back to back).
  // What remains over the spin is the GPU's own launch cost after an event.
  const double a_med = a[a.size() / 2], b_med = b[b.size() / 2];
  std::cout << "20 us spin: median " << a_med << " us; 100 us spin: median "
            << b_med << " us\n";
  EXPECT_GE(a_med, 20.0);
  EXPECT_LE(a_med, 26.0);
  EXPECT_GE(b_med, 100.0);
  EXPECT_LE(b_med, 106.0);
  EXPECT_FALSE(result->stop_reason.empty());
  EXPECT_EQ(result->discarded_batches, 0);

  // The same without the L2 flush: what the flush itself adds to a sample.
  opt.flush_l2 = false;
  InterleavedSampler hot(ctx_.get(), flusher->get(), blocker->get(), opt);
  auto warm = hot.Run({{"20us", [&] { return Spin(20000, s); }}});
  ASSERT_TRUE(warm.ok()) << warm.status();
  std::vector<double> w = warm->samples_us[0];
  std::sort(w.begin(), w.end());
  std::cout << "20 us spin without L2 flush: median " << w[w.size() / 2]
            << " us\n";
  EXPECT_GE(w[w.size() / 2], 20.0);
  EXPECT_LE(w[w.size() / 2], a_med + 0.5);
}

// Launches that reach the GPU too slowly to queue behind the blocker (as
// under ncu, which serialises them): every batch is discarded, and the
// sampler ends at its time limit with an error instead of looping; a
// blocker told that a tool is attached stands aside, and sampling works.
TEST_F(MeasureTest, InterleavedSamplerEndsWhenEveryBatchIsDiscarded) {
  auto flusher = L2Flusher::Create(ctx_->spec().l2_bytes());
  cudaStream_t s = ctx_->stream();
  auto slow = [&] {
    absl::SleepFor(absl::Milliseconds(3));
    return Spin(1000, s);
  };
  InterleavedSampler::Options opt;
  opt.stop.max_time_ms = 200;
  auto blocker = StreamBlocker::Create(/*timeout_ms=*/1);
  InterleavedSampler sampler(ctx_.get(), flusher->get(), blocker->get(), opt);
  auto result = sampler.Run({{"slow", slow}});
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(result.status().message()),
              ::testing::HasSubstr("timing got no samples"));
  auto aside = StreamBlocker::Create(/*timeout_ms=*/1, /*tool_attached=*/true);
  InterleavedSampler unblocked(ctx_.get(), flusher->get(), aside->get(), opt);
  result = unblocked.Run({{"slow", slow}});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GE(result->samples_us[0].size(), 1u);
  EXPECT_EQ(result->discarded_batches, 0);
}

TEST_F(MeasureTest, InputsAreSeededAndInRange) {
  auto a = DeviceBuffer::Allocate(4096 * 4),
       b = DeviceBuffer::Allocate(4096 * 4);
  cudaStream_t s = ctx_->stream();
  ASSERT_EQ(LaunchFillUniform(a->get(), v1::DTYPE_FP32, 4096, 42, -1, 1, s),
            cudaSuccess);
  ASSERT_EQ(LaunchFillUniform(b->get(), v1::DTYPE_FP32, 4096, 42, -1, 1, s),
            cudaSuccess);
  std::vector<float> ha(4096), hb(4096);
  cudaMemcpyAsync(ha.data(), a->get(), 4096 * 4, cudaMemcpyDeviceToHost, s);
  cudaMemcpyAsync(hb.data(), b->get(), 4096 * 4, cudaMemcpyDeviceToHost, s);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_EQ(ha, hb);
  double sum = 0;
  int negative = 0;
  for (float v : ha) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
    sum += v;
    negative += v < 0;
  }
  EXPECT_NEAR(sum / 4096, 0.0, 0.05);
  EXPECT_GT(negative, 1800);
  ASSERT_EQ(LaunchFillUniform(b->get(), v1::DTYPE_FP32, 4096, 43, -1, 1, s),
            cudaSuccess);
  cudaMemcpyAsync(hb.data(), b->get(), 4096 * 4, cudaMemcpyDeviceToHost, s);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_NE(ha, hb);
}

TEST_F(MeasureTest, CeilingsAreMeasuredAndDatasheetPeaksLabelled) {
  v1::GpuSpec spec = ctx_->spec();
  ASSERT_TRUE(MeasureCeilings(ctx_.get(), &spec).ok());
  std::cout << spec.name() << ": measured " << spec.measured_copy_gbps()
            << " GB/s copy, " << spec.measured_fp32_tflops()
            << " TFLOP/s FP32; datasheet '" << spec.datasheet_name() << "' "
            << spec.datasheet_memory_gbps() << " GB/s, "
            << spec.datasheet_fp32_tflops() << " TFLOP/s\n";
  // Plausible for any data-centre GPU of the last years; far from the
  // mistakes of a wrong unit (x1000) or a wrong byte count (x2).
  EXPECT_GT(spec.measured_copy_gbps(), 300);
  EXPECT_LT(spec.measured_copy_gbps(), 12000);
  EXPECT_GT(spec.measured_fp32_tflops(), 5);
  EXPECT_LT(spec.measured_fp32_tflops(), 200);
  if (spec.datasheet_memory_gbps() > 0) {
    // Measured ceilings stay under the datasheet's.
    EXPECT_LT(spec.measured_copy_gbps(), 1.05 * spec.datasheet_memory_gbps());
    EXPECT_LT(spec.measured_fp32_tflops(), 1.05 * spec.datasheet_fp32_tflops());
  }
}

TEST(CeilingsTest, DatasheetPeaksByName) {
  v1::GpuSpec h200;
  h200.set_name("NVIDIA H200");
  FillDatasheetPeaks(&h200);
  EXPECT_EQ(h200.datasheet_name(), "H200 SXM datasheet");
  EXPECT_EQ(h200.datasheet_memory_gbps(), 4800);
  v1::GpuSpec pcie;
  pcie.set_name("NVIDIA H100 PCIe");
  FillDatasheetPeaks(&pcie);
  EXPECT_EQ(pcie.datasheet_memory_gbps(), 2000);
  v1::GpuSpec other;
  other.set_name("NVIDIA A10");
  FillDatasheetPeaks(&other);
  EXPECT_EQ(other.datasheet_memory_gbps(), 0);
  EXPECT_TRUE(other.datasheet_name().empty());
}

}  // namespace
}  // namespace kbench
