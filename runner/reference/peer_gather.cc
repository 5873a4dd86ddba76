#include "runner/reference/peer_gather.h"

#include "absl/strings/str_cat.h"
#include "runner/device/cuda_status.h"
#include "runner/device/harness_kernels.h"

namespace kbench {

absl::Status PeerGather::Register(int rank, const void* send, int64_t bytes) {
  if (rank < 0 || rank >= world_size() || send == nullptr || bytes < 0) {
    return absl::InternalError(
        absl::StrCat("an all-gather of ", world_size(), " ranks got rank ",
                     rank, "'s send buffer of ", bytes, " bytes",
                     send == nullptr ? " at a null pointer" : ""));
  }
  sends_[rank] = {send, bytes};
  return absl::OkStatus();
}

absl::Status PeerGather::Enqueue(int rank, void* recv, int64_t recv_bytes,
                                 cudaStream_t stream) const {
  const int world = world_size();
  if (world < 1 || world > 8 || rank < 0 || rank >= world) {
    return absl::InternalError(
        absl::StrCat("an all-gather of ", world, " ranks run at rank ", rank));
  }
  GatherShards shards{};
  shards.world = world;
  shards.bytes = sends_[0].bytes;
  for (int r = 0; r < world; ++r) {
    if (sends_[r].ptr == nullptr || sends_[r].bytes != shards.bytes) {
      return absl::FailedPreconditionError(
          absl::StrCat("the all-gather's rank ", r,
                       sends_[r].ptr == nullptr
                           ? " has no send buffer yet"
                           : absl::StrCat(" sends ", sends_[r].bytes,
                                          " bytes, rank 0 ", shards.bytes)));
    }
    shards.src[r] = sends_[r].ptr;
  }
  if (recv_bytes < shards.bytes * world) {
    return absl::FailedPreconditionError(
        absl::StrCat("the all-gather's receive buffer holds ", recv_bytes,
                     " bytes, not ", world, " shards of ", shards.bytes));
  }
  CUDA_RETURN_IF_ERROR(LaunchGatherShards(shards, recv, stream),
                       absl::StrCat("gathering the shards on rank ", rank));
  return absl::OkStatus();
}

}  // namespace kbench
