// Collective's bookkeeping of the ranks' send buffers, which NcclGather
// and PeerGather share (no GPU: nothing is enqueued).
#include "runner/reference/collective.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

// Enqueue hands back the rank's send buffer, as the real ones pass it on.
class FakeCollective : public Collective {
 public:
  using Collective::Collective;
  absl::Status Enqueue(int rank, void* recv, int64_t recv_bytes,
                       cudaStream_t) override {
    absl::StatusOr<const void*> mine = SendOf(rank, recv_bytes);
    if (!mine.ok()) return mine.status();
    last_ = *mine;
    return absl::OkStatus();
  }
  std::string Name() const override { return "fake"; }
  const void* last_ = nullptr;
};

TEST(CollectiveTest, EveryRankMustSendAShardOfOneSize) {
  FakeCollective c(2);
  int a = 0, b = 0;
  char recv[16];
  EXPECT_EQ(c.world_size(), 2);
  absl::Status s = c.Enqueue(0, recv, 16, nullptr);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("rank 0 has no send buffer yet"));
  ASSERT_TRUE(c.Register(0, &a, 8).ok());
  ASSERT_TRUE(c.Register(1, &b, 4).ok());
  s = c.Enqueue(1, recv, 16, nullptr);
  EXPECT_THAT(s.message(), HasSubstr("rank 1 sends 4 bytes, rank 0 8"));
  ASSERT_TRUE(c.Register(1, &b, 8).ok());
  // The receive buffer must hold every shard.
  s = c.Enqueue(1, recv, 15, nullptr);
  EXPECT_THAT(s.message(), HasSubstr("holds 15 bytes, not 2 shards of 8"));
  ASSERT_TRUE(c.Enqueue(1, recv, 16, nullptr).ok());
  EXPECT_EQ(c.last_, &b);
}

TEST(CollectiveTest, ARankOutsideTheWorldOrANullBufferIsRefused) {
  FakeCollective c(2);
  int a = 0;
  EXPECT_EQ(c.Register(2, &a, 4).code(), absl::StatusCode::kInternal);
  EXPECT_EQ(c.Register(-1, &a, 4).code(), absl::StatusCode::kInternal);
  EXPECT_EQ(c.Register(0, nullptr, 4).code(), absl::StatusCode::kInternal);
  char recv[8];
  EXPECT_EQ(c.Enqueue(5, recv, 8, nullptr).code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace kbench
