// NcclGather, the NCCL all-gather of a baseline that spans GPUs
// (docs/multi-gpu.md), from the machine's libnccl.so.2: its version, an
// all-gather of one rank (the NCCL calls a submit makes, on one GPU), the
// refusal of two ranks on one GPU that sends a submit to PeerGather, and,
// where two GPUs are visible, an all-gather across them.
#include "runner/reference/nccl_gather.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runner/device/device_buffer.h"
#include "tests/gpu/device_test.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

class NcclGatherTest : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    const absl::StatusOr<std::string> version = NcclGather::LibraryVersion();
    if (!version.ok()) GTEST_SKIP() << version.status();
    version_ = *version;
  }
  // `n` bytes of 0, 1, 2, ... from `first`.
  static std::vector<uint8_t> Pattern(int64_t n, int first) {
    std::vector<uint8_t> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(first + i);
    return v;
  }
  std::string version_;
};

TEST_F(NcclGatherTest, TheLibrarySaysItsVersion) {
  EXPECT_THAT(version_, MatchesRegex("2\\.[0-9]+\\.[0-9]+"));
}

TEST_F(NcclGatherTest, OneRankGathersItsShard) {
  absl::StatusOr<std::unique_ptr<NcclGather>> g = NcclGather::Create({0});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->Name(), "NCCL " + version_ + " all-gather");
  constexpr int64_t kBytes = 1 << 20;
  auto send = DeviceBuffer::Allocate(kBytes);
  auto recv = DeviceBuffer::Allocate(kBytes);
  ASSERT_TRUE(send.ok() && recv.ok());
  const std::vector<uint8_t> pattern = Pattern(kBytes, 3);
  ASSERT_EQ(
      cudaMemcpy(send->get(), pattern.data(), kBytes, cudaMemcpyHostToDevice),
      cudaSuccess);
  ASSERT_EQ(cudaMemset(recv->get(), 0, kBytes), cudaSuccess);
  // Before the send buffer is known, the gather says so.
  EXPECT_EQ((*g)->Enqueue(0, recv->get(), kBytes, ctx_->stream()).code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE((*g)->Register(0, send->get(), kBytes).ok());
  EXPECT_EQ((*g)->Enqueue(0, recv->get(), kBytes - 1, ctx_->stream()).code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE((*g)->BeginStep().ok());
  ASSERT_TRUE((*g)->Enqueue(0, recv->get(), kBytes, ctx_->stream()).ok());
  ASSERT_TRUE((*g)->EndStep().ok());
  ASSERT_EQ(cudaStreamSynchronize(ctx_->stream()), cudaSuccess);
  std::vector<uint8_t> got(kBytes);
  ASSERT_EQ(cudaMemcpy(got.data(), recv->get(), kBytes, cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(got, pattern);
}

TEST_F(NcclGatherTest, TwoRanksOnOneGpuAreRefused) {
  absl::StatusOr<std::unique_ptr<NcclGather>> g = NcclGather::Create({0, 0});
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(g.status().message(), HasSubstr("two ranks share a GPU"));
}

TEST_F(NcclGatherTest, TwoGpusGatherEachOthersShards) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  if (count < 2) GTEST_SKIP() << "one GPU is visible";
  absl::StatusOr<std::unique_ptr<NcclGather>> g = NcclGather::Create({0, 1});
  ASSERT_TRUE(g.ok()) << g.status();
  constexpr int64_t kBytes = 1 << 20;
  std::vector<DeviceBuffer> sends, recvs;
  std::vector<cudaStream_t> streams(2);
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(cudaSetDevice(r), cudaSuccess);
    ASSERT_EQ(cudaStreamCreate(&streams[r]), cudaSuccess);
    auto send = DeviceBuffer::Allocate(kBytes);
    auto recv = DeviceBuffer::Allocate(2 * kBytes);
    ASSERT_TRUE(send.ok() && recv.ok());
    const std::vector<uint8_t> p = Pattern(kBytes, 100 * r);
    ASSERT_EQ(cudaMemcpy(send->get(), p.data(), kBytes, cudaMemcpyHostToDevice),
              cudaSuccess);
    ASSERT_TRUE((*g)->Register(r, send->get(), kBytes).ok());
    sends.push_back(std::move(*send));
    recvs.push_back(std::move(*recv));
  }
  ASSERT_TRUE((*g)->BeginStep().ok());
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(cudaSetDevice(r), cudaSuccess);
    ASSERT_TRUE((*g)->Enqueue(r, recvs[r].get(), 2 * kBytes, streams[r]).ok());
  }
  ASSERT_TRUE((*g)->EndStep().ok());
  std::vector<uint8_t> want = Pattern(kBytes, 0);
  const std::vector<uint8_t> second = Pattern(kBytes, 100);
  want.insert(want.end(), second.begin(), second.end());
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(cudaSetDevice(r), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(streams[r]), cudaSuccess);
    std::vector<uint8_t> got(2 * kBytes);
    ASSERT_EQ(cudaMemcpy(got.data(), recvs[r].get(), 2 * kBytes,
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    EXPECT_EQ(got, want) << "rank " << r;
    cudaStreamDestroy(streams[r]);
  }
  cudaSetDevice(0);
}

}  // namespace
}  // namespace kbench
