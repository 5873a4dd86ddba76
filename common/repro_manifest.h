// The reproducibility manifest of a result (kbench.v1.ReproManifest):
// deterministic digests of the problem and shape sets as run, and its
// compact one-paragraph rendering for the text report.
//
// Thread safety: pure functions; safe to call concurrently.
#ifndef KBENCH_COMMON_REPRO_MANIFEST_H_
#define KBENCH_COMMON_REPRO_MANIFEST_H_

#include <string>

#include "google/protobuf/message.h"
#include "kbench/v1/report.pb.h"

namespace kbench {

// sha256 (64 hex digits) of the deterministic serialization of `message`
// (map entries sorted), so equal messages always give equal digests.
std::string ProtoDigest(const google::protobuf::Message& message);

// Fills gpu_*, driver, runtime, NVRTC and maximum clocks from `spec`.
void FillManifestGpu(const v1::GpuSpec& spec, v1::ReproManifest* manifest);

// Lines such as "repro: NVIDIA H200 (GPU-1234...), driver 13.0, CUDA 13.0,
// NVRTC 13.0 ..."; "" for an empty manifest.
std::string ManifestText(const v1::ReproManifest& manifest);

}  // namespace kbench

#endif  // KBENCH_COMMON_REPRO_MANIFEST_H_
