// Collective: the all-gather step of a baseline that spans GPUs (`nccl {
// all_gather { send recv } }` in a problem's file), shared by the ranks'
// baseline pipelines, one BaselinePipeline per rank. Each rank's pipeline
// registers its send buffer when it is prepared and enqueues its part when
// it runs. Two kinds: NcclGather (NCCL's all-gather, what a PyTorch user
// runs) and PeerGather (an all-gather by peer reads, standing in where
// NCCL cannot run: two ranks on one GPU, or no libnccl).
//
// One host thread drives every rank, so a step of a collective is
// enqueued on every rank between BeginStep and EndStep (NCCL's group
// calls: without them its first rank's call would wait for the others).
//
// Thread safety: none (runner thread).
#ifndef KBENCH_RUNNER_REFERENCE_COLLECTIVE_H_
#define KBENCH_RUNNER_REFERENCE_COLLECTIVE_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kbench {

class Collective {
 public:
  explicit Collective(int world) : sends_(world) {}
  virtual ~Collective() = default;

  int world_size() const { return static_cast<int>(sends_.size()); }
  // Rank `rank`'s send buffer: `bytes` at `send` on its device.
  absl::Status Register(int rank, const void* send, int64_t bytes);
  // Before and after enqueueing one step on every rank.
  virtual absl::Status BeginStep() { return absl::OkStatus(); }
  virtual absl::Status EndStep() { return absl::OkStatus(); }
  // Enqueues rank `rank`'s part: every rank's shard into `recv`
  // (`recv_bytes`, at least world x the shard's bytes) in rank order, on
  // `stream`, rank `rank`'s, with its device selected. FailedPrecondition
  // until every rank registered a shard of one size.
  virtual absl::Status Enqueue(int rank, void* recv, int64_t recv_bytes,
                               cudaStream_t stream) = 0;
  // Kernels one Enqueue launches on a rank.
  virtual int Kernels() const { return 1; }
  // What a baseline's name says of its all-gather.
  virtual std::string Name() const = 0;

 protected:
  // Rank `rank`'s send buffer, once every rank registered one of the same
  // size and `recv_bytes` holds every shard; else FailedPrecondition.
  absl::StatusOr<const void*> SendOf(int rank, int64_t recv_bytes) const;
  int64_t shard_bytes() const { return sends_.empty() ? 0 : sends_[0].bytes; }
  const void* send(int rank) const { return sends_[rank].ptr; }

 private:
  struct Send {
    const void* ptr = nullptr;
    int64_t bytes = -1;
  };
  std::vector<Send> sends_;  // By rank.
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_REFERENCE_COLLECTIVE_H_
