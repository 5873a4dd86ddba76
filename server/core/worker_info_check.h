// What kbd checks of a worker's facts (WorkerInfo, from the network) before
// the WorkerRegistry stores any of them: ids and text, the version, the GPU
// spec within physical ranges, and the links to the host's other GPUs.
//
// Thread safety: pure functions; safe to call concurrently.
#ifndef KBENCH_SERVER_CORE_WORKER_INFO_CHECK_H_
#define KBENCH_SERVER_CORE_WORKER_INFO_CHECK_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "kbench/v1/worker.pb.h"

namespace kbench {

// True for a GPU architecture name as NVRTC takes it: "sm_" and two or three
// digits, optionally followed by "a" or "f" (sm_90, sm_90a, sm_100f).
bool IsGpuArch(absl::string_view arch);

// Checks what a worker says about itself before anything is stored:
// worker_id as a job id (base/untrusted_input.h), hostname as bounded
// text, version equal to kbd's own (KBENCH_VERSION), and a GPU spec within
// physical ranges (name present, arch like sm_90 and matching the compute
// capability, SM count, threads per block 64..4096, shared memory, block and
// grid limits, finite ceilings), and links that each name another GPU of
// the host once, at most 64, with bounded figures. InvalidArgument naming
// the field, its value and the accepted range.
absl::Status ValidateWorkerInfo(const v1::WorkerInfo& info);

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_WORKER_INFO_CHECK_H_
