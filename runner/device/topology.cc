#include "runner/device/topology.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "runner/device/cuda_status.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

// GB/s of the fastest of `copies` copies of `bytes` from `peer` to
// `device` (peer access enabled on `device`).
absl::StatusOr<double> TimePeerCopy(int device, int peer, size_t bytes,
                                    int copies) {
  void* src = nullptr;
  void* dst = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  cudaStream_t stream = nullptr;
  auto release = [&] {
    if (src != nullptr) {
      (void)cudaSetDevice(peer);
      (void)cudaFree(src);
    }
    (void)cudaSetDevice(device);
    if (dst != nullptr) (void)cudaFree(dst);
    if (start != nullptr) (void)cudaEventDestroy(start);
    if (stop != nullptr) (void)cudaEventDestroy(stop);
    if (stream != nullptr) (void)cudaStreamDestroy(stream);
  };
  auto run = [&]() -> absl::StatusOr<double> {
    CUDA_RETURN_IF_ERROR(cudaSetDevice(peer), "selecting the peer");
    CUDA_RETURN_IF_ERROR(cudaMalloc(&src, bytes), "allocating on the peer");
    CUDA_RETURN_IF_ERROR(cudaSetDevice(device), "selecting the device");
    CUDA_RETURN_IF_ERROR(cudaMalloc(&dst, bytes), "allocating");
    CUDA_RETURN_IF_ERROR(cudaStreamCreate(&stream), "creating a stream");
    CUDA_RETURN_IF_ERROR(cudaEventCreate(&start), "creating an event");
    CUDA_RETURN_IF_ERROR(cudaEventCreate(&stop), "creating an event");
    float best_ms = 0;
    for (int i = 0; i < std::max(1, copies); ++i) {
      CUDA_RETURN_IF_ERROR(cudaEventRecord(start, stream), "recording");
      CUDA_RETURN_IF_ERROR(
          cudaMemcpyPeerAsync(dst, device, src, peer, bytes, stream),
          "copying from the peer");
      CUDA_RETURN_IF_ERROR(cudaEventRecord(stop, stream), "recording");
      CUDA_RETURN_IF_ERROR(cudaEventSynchronize(stop), "waiting for a copy");
      float ms = 0;
      CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start, stop), "timing");
      if (ms > 0 && (best_ms == 0 || ms < best_ms)) best_ms = ms;
    }
    if (best_ms <= 0) return 0.0;
    return static_cast<double>(bytes) / (best_ms * 1e-3) / 1e9;
  };
  absl::StatusOr<double> gbps = run();
  release();
  return gbps;
}

}  // namespace

absl::StatusOr<v1::RunnerTopology> MeasureTopology(
    const TopologyOptions& options) {
  int count = 0;
  CUDA_RETURN_IF_ERROR(cudaGetDeviceCount(&count), "counting the GPUs");
  if (options.device < 0 || options.device >= count) {
    return absl::InvalidArgumentError(absl::StrCat("--device ", options.device,
                                                   " is not one of the ", count,
                                                   " visible GPUs"));
  }
  v1::RunnerTopology topology;
  topology.set_device_count(count);
  for (int peer = 0; peer < count; ++peer) {
    if (peer == options.device) continue;
    v1::GpuLink* link = topology.add_links();
    link->set_peer_gpu_index(peer);
    int to = 0;
    int from = 0;
    CUDA_RETURN_IF_ERROR(cudaDeviceCanAccessPeer(&to, options.device, peer),
                         "asking for peer access");
    CUDA_RETURN_IF_ERROR(cudaDeviceCanAccessPeer(&from, peer, options.device),
                         "asking for peer access");
    if (to == 0 || from == 0) continue;
    link->set_peer_access(true);
    int rank = 0;
    if (cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank,
                                  options.device, peer) == cudaSuccess) {
      link->set_performance_rank(rank);
    }
    CUDA_RETURN_IF_ERROR(cudaSetDevice(options.device), "selecting the device");
    const cudaError_t enabled = cudaDeviceEnablePeerAccess(peer, 0);
    if (enabled != cudaSuccess &&
        enabled != cudaErrorPeerAccessAlreadyEnabled) {
      (void)cudaGetLastError();
      spdlog::warn("enabling peer access from GPU {} to {}: {}", options.device,
                   peer, cudaGetErrorString(enabled));
      continue;
    }
    absl::StatusOr<double> gbps =
        TimePeerCopy(options.device, peer, options.copy_bytes, options.copies);
    if (gbps.ok()) {
      link->set_copy_gbps(*gbps);
    } else {
      spdlog::warn("timing a copy from GPU {} to {}: {}", peer, options.device,
                   std::string(gbps.status().message()));
    }
    (void)cudaSetDevice(options.device);
    (void)cudaDeviceDisablePeerAccess(peer);
  }
  return topology;
}

}  // namespace kbench
