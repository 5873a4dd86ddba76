// MeasureTopology: how one GPU reaches the other GPUs this process can see
// (docs/multi-gpu.md), for `kbrunner --topology`: peer access both ways,
// CUDA's performance rank of the link, and a timed peer copy. kbworker runs
// it once at start with every GPU of the host visible (its job runners see
// only their own GPU) and reports the links with its lease requests, so
// kbd forms gangs only of GPUs that reach each other.
//
// Thread safety: call from one thread; it selects devices (cudaSetDevice)
// and enables and disables peer access.
#ifndef KBENCH_RUNNER_DEVICE_TOPOLOGY_H_
#define KBENCH_RUNNER_DEVICE_TOPOLOGY_H_

#include "absl/status/statusor.h"
#include "kbench/v1/worker.pb.h"

namespace kbench {

struct TopologyOptions {
  // The GPU whose links are measured (a CUDA ordinal).
  int device = 0;
  // Bytes of each timed peer copy.
  size_t copy_bytes = size_t{64} << 20;
  // Timed copies per link; the fastest counts (the first also warms up).
  int copies = 3;
};

// One link per other visible GPU, in ordinal order. InvalidArgument for a
// device that does not exist; a CUDA error otherwise. A copy that fails
// leaves that link's copy_gbps at 0, not the whole report.
absl::StatusOr<v1::RunnerTopology> MeasureTopology(
    const TopologyOptions& options);

}  // namespace kbench

#endif  // KBENCH_RUNNER_DEVICE_TOPOLOGY_H_
