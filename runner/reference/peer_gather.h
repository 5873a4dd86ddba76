// PeerGather: the all-gather step of a baseline that spans GPUs
// (`nccl { all_gather { send recv } }` in a problem's file), shared by the
// ranks' baseline pipelines, one BaselinePipeline per rank. Each rank's
// pipeline registers its send buffer when it is prepared; when it runs, it
// gathers every rank's shard into its own recv buffer, reading the peers'
// memory directly (LaunchGatherShards, one kernel; peer access is enabled
// by RankGroup).
//
// It stands in for NCCL's all-gather, which is not loaded yet
// (docs/multi-gpu.md): NCCL also refuses two ranks on one GPU, which is
// how the one-GPU machines test the multi-rank path. The send buffers are
// a problem's per-rank inputs, which nothing writes while a baseline runs,
// so a rank may read its peers' shards without waiting for them.
//
// Ownership: borrows the send buffers. Thread safety: none (runner
// thread).
#ifndef KBENCH_RUNNER_REFERENCE_PEER_GATHER_H_
#define KBENCH_RUNNER_REFERENCE_PEER_GATHER_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "absl/status/status.h"

namespace kbench {

class PeerGather {
 public:
  // What a baseline's name says of its all-gather while this stands in.
  static constexpr char kStandIn[] =
      "all-gather by peer reads, standing in for NCCL";

  explicit PeerGather(int world) : sends_(world) {}

  int world_size() const { return static_cast<int>(sends_.size()); }
  // Rank `rank`'s send buffer: `bytes` at `send` on its device.
  absl::Status Register(int rank, const void* send, int64_t bytes);
  // Enqueues rank `rank`'s gather into `recv` (`recv_bytes`, at least world
  // x the shard's bytes) on `stream`, rank `rank`'s, with its device
  // selected. FailedPrecondition until every rank registered a shard of
  // one size.
  absl::Status Enqueue(int rank, void* recv, int64_t recv_bytes,
                       cudaStream_t stream) const;

 private:
  struct Send {
    const void* ptr = nullptr;
    int64_t bytes = -1;
  };
  std::vector<Send> sends_;  // By rank.
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_REFERENCE_PEER_GATHER_H_
