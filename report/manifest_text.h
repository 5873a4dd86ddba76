// The reproducibility manifest of a result (kbench.v1.ReproManifest) as
// its compact one-paragraph rendering for the text report.
//
// Thread safety: pure functions; safe to call concurrently.
#ifndef KBENCH_REPORT_MANIFEST_TEXT_H_
#define KBENCH_REPORT_MANIFEST_TEXT_H_

#include <string>

#include "kbench/v1/report.pb.h"

namespace kbench {

// Lines such as "repro: NVIDIA H200 (GPU-1234...), driver 13.0, CUDA 13.0,
// NVRTC 13.0 ..."; "" for an empty manifest.
std::string ManifestText(const v1::ReproManifest& manifest);

}  // namespace kbench

#endif  // KBENCH_REPORT_MANIFEST_TEXT_H_
