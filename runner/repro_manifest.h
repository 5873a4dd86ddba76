// The GPU half of a result's reproducibility manifest
// (kbench.v1.ReproManifest), filled by the runner; the digests come from
// base/digest.h and the text from report/manifest_text.h.
//
// Thread safety: pure functions; safe to call concurrently.
#ifndef KBENCH_RUNNER_REPRO_MANIFEST_H_
#define KBENCH_RUNNER_REPRO_MANIFEST_H_

#include "kbench/v1/report.pb.h"

namespace kbench {

// Fills gpu_*, driver, runtime, NVRTC and maximum clocks from `spec`.
void FillManifestGpu(const v1::GpuSpec& spec, v1::ReproManifest* manifest);

}  // namespace kbench

#endif  // KBENCH_RUNNER_REPRO_MANIFEST_H_
