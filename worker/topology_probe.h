// ProbeTopology: how this worker's GPU reaches the other GPUs of its host,
// measured by a short-lived `RUNNER --topology FILE --device GPU` child
// (runner/device/topology.h). The child inherits kbworker's environment,
// so it sees every GPU kbworker sees; the job runners see only their own.
// kbworker probes once at start and reports the links with every lease
// request (WorkerInfo.links), so kbd forms gangs only of GPUs that reach
// each other (docs/multi-gpu.md).
//
// Thread safety: safe to call from any thread (no shared state).
#ifndef KBENCH_WORKER_TOPOLOGY_PROBE_H_
#define KBENCH_WORKER_TOPOLOGY_PROBE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kbench/v1/worker.pb.h"

namespace kbench {

struct TopologyProbeOptions {
  // The runner executable (kbrunner, or kb_fake_runner in tests).
  std::string runner;
  // The GPU's index among the GPUs kbworker sees.
  int gpu = 0;
  // The child is killed after this long.
  absl::Duration timeout = absl::Seconds(60);
};

// The child's RunnerTopology. Unavailable when it could not start, failed
// or timed out; DataLoss when what it wrote does not parse or is over
// 64 KiB.
absl::StatusOr<v1::RunnerTopology> ProbeTopology(
    const TopologyProbeOptions& options);

}  // namespace kbench

#endif  // KBENCH_WORKER_TOPOLOGY_PROBE_H_
