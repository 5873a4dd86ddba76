#include "runner/reference/peer_gather.h"

#include <iterator>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runner/device/cuda_status.h"
#include "runner/device/harness_kernels.h"

namespace kbench {

std::string PeerGather::Name() const {
  return absl::StrCat("all-gather by peer reads, standing in for NCCL",
                      why_.empty() ? "" : absl::StrCat(" (", why_, ")"));
}

absl::Status PeerGather::Enqueue(int rank, void* recv, int64_t recv_bytes,
                                 cudaStream_t stream) {
  RETURN_IF_ERROR(SendOf(rank, recv_bytes).status());
  GatherShards shards{};
  shards.world = world_size();
  shards.bytes = shard_bytes();
  if (shards.world > static_cast<int>(std::size(shards.src))) {
    return absl::InternalError(
        absl::StrCat("an all-gather of ", shards.world, " ranks"));
  }
  for (int r = 0; r < shards.world; ++r) shards.src[r] = send(r);
  CUDA_RETURN_IF_ERROR(LaunchGatherShards(shards, recv, stream),
                       absl::StrCat("gathering the shards on rank ", rank));
  return absl::OkStatus();
}

}  // namespace kbench
