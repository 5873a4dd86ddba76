// PeerGather: an all-gather by peer reads (Collective): each rank gathers
// every rank's shard into its own recv buffer, reading the peers' memory
// directly (LaunchGatherShards, one kernel; peer access is enabled by
// RankGroup). It stands in for NCCL's all-gather where NCCL cannot run
// (NCCL refuses two ranks on one GPU, which is how the one-GPU machines
// test the multi-rank path). The send buffers are a problem's per-rank
// inputs, which nothing writes while a baseline runs, so a rank may read
// its peers' shards without waiting for them.
//
// Ownership: borrows the send buffers. Thread safety: none (runner
// thread).
#ifndef KBENCH_RUNNER_REFERENCE_PEER_GATHER_H_
#define KBENCH_RUNNER_REFERENCE_PEER_GATHER_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "runner/reference/collective.h"

namespace kbench {

class PeerGather : public Collective {
 public:
  // `why`: why NCCL is not used, for the name.
  PeerGather(int world, std::string why)
      : Collective(world), why_(std::move(why)) {}

  absl::Status Enqueue(int rank, void* recv, int64_t recv_bytes,
                       cudaStream_t stream) override;
  // "all-gather by peer reads, standing in for NCCL (WHY)".
  std::string Name() const override;

 private:
  std::string why_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_REFERENCE_PEER_GATHER_H_
