// NcclGather: NCCL's all-gather (Collective), what a PyTorch user's
// dist.all_gather_into_tensor runs, from the libnccl.so.2 the machine has
// (the CUDA image's or the NCCL Debian package's), loaded with dlopen:
// kbench links no NCCL, and a machine without it falls back to PeerGather.
// One communicator per rank, made together (ncclCommInitAll) for the
// ranks' devices. NVLink SHARP (multicast) stays off: NCCL_NVLS_ENABLE=0
// is set before NCCL starts, as on the lent machines multicast can put
// shared GPUs out of service.
//
// Ownership: owns the communicators; borrows the send buffers.
// Thread safety: none (runner thread).
#ifndef KBENCH_RUNNER_REFERENCE_NCCL_GATHER_H_
#define KBENCH_RUNNER_REFERENCE_NCCL_GATHER_H_

#include <nccl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runner/reference/collective.h"

namespace kbench {

class NcclGather : public Collective {
 public:
  // Unavailable when libnccl.so.2 cannot be loaded, when two ranks share
  // a GPU (NCCL refuses that), or when NCCL cannot make the communicators;
  // the message says which, for the fallback's name. `devices[r]` is rank
  // r's visible device ordinal.
  static absl::StatusOr<std::unique_ptr<NcclGather>> Create(
      const std::vector<int>& devices);
  ~NcclGather() override;

  NcclGather(const NcclGather&) = delete;
  NcclGather& operator=(const NcclGather&) = delete;

  // The loadable library's version, e.g. "2.28.3"; Unavailable when
  // libnccl.so.2 cannot be loaded.
  static absl::StatusOr<std::string> LibraryVersion();

  // ncclGroupStart and ncclGroupEnd.
  absl::Status BeginStep() override;
  absl::Status EndStep() override;
  absl::Status Enqueue(int rank, void* recv, int64_t recv_bytes,
                       cudaStream_t stream) override;
  // "NCCL 2.28.3 all-gather".
  std::string Name() const override;

 private:
  explicit NcclGather(int world) : Collective(world) {}

  std::vector<ncclComm_t> comms_;  // By rank.
  std::string version_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_REFERENCE_NCCL_GATHER_H_
