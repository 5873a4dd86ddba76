#include "runner/device/ceilings.h"

#include <algorithm>
#include <vector>

#include "absl/strings/match.h"
#include "base/status_macros.h"
#include "runner/device/cuda_status.h"
#include "runner/device/event_timer.h"
#include "runner/device/harness_kernels.h"

namespace kbench {

void FillDatasheetPeaks(v1::GpuSpec* spec) {
  struct Peak {
    const char* name_has;
    const char* label;
    double memory_gbps;
    double fp32_tflops;
    double bf16_tflops;
  };
  // Dense FP32 (non-tensor), dense BF16 tensor-core and HBM bandwidth, from
  // NVIDIA's datasheets (the tensor figures without sparsity).
  static constexpr Peak kPeaks[] = {
      {"H200", "H200 SXM datasheet", 4800, 67, 989},
      {"H100 PCIe", "H100 PCIe datasheet", 2000, 51, 756},
      {"H100", "H100 SXM datasheet", 3350, 67, 989},
  };
  for (const Peak& p : kPeaks) {
    if (absl::StrContains(spec->name(), p.name_has)) {
      spec->set_datasheet_memory_gbps(p.memory_gbps);
      spec->set_datasheet_fp32_tflops(p.fp32_tflops);
      spec->set_datasheet_bf16_tflops(p.bf16_tflops);
      spec->set_datasheet_name(p.label);
      return;
    }
  }
}

absl::Status MeasureCeilings(DeviceContext* ctx, v1::GpuSpec* spec) {
  FillDatasheetPeaks(spec);
  cudaStream_t s = ctx->stream();
  ASSIGN_OR_RETURN(std::unique_ptr<EventTimer> timer, EventTimer::Create(1));

  // Copy bandwidth: 512 MiB, well past the L2; best of 5.
  const size_t bytes = 512u << 20;
  ASSIGN_OR_RETURN(DeviceBuffer src, DeviceBuffer::Allocate(bytes));
  ASSIGN_OR_RETURN(DeviceBuffer dst, DeviceBuffer::Allocate(bytes));
  CUDA_RETURN_IF_ERROR(cudaMemsetAsync(src.get(), 1, bytes, s),
                       "preparing the copy probe");
  double best_copy_us = 0;
  for (int i = 0; i < 6; ++i) {
    RETURN_IF_ERROR(timer->Start(0, s));
    CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst.get(), src.get(), bytes,
                                         cudaMemcpyDeviceToDevice, s),
                         "running the copy probe");
    RETURN_IF_ERROR(timer->Stop(0, s));
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s), "running the copy probe");
    ASSIGN_OR_RETURN(const double us, timer->ElapsedUs(0));
    if (i > 0 && (best_copy_us == 0 || us < best_copy_us)) best_copy_us = us;
  }
  if (best_copy_us > 0) {
    spec->set_measured_copy_gbps(2.0 * bytes / (best_copy_us * 1e-6) / 1e9);
  }

  // FP32 FMA throughput: 8 blocks of 512 threads per SM; best of 3.
  const int threads = 512, blocks = 8 * std::max(1, spec->sm_count());
  const int iterations = 4096;
  ASSIGN_OR_RETURN(DeviceBuffer out,
                   DeviceBuffer::Allocate(sizeof(float) * threads * blocks));
  double best_fma_us = 0;
  for (int i = 0; i < 4; ++i) {
    RETURN_IF_ERROR(timer->Start(0, s));
    CUDA_RETURN_IF_ERROR(
        LaunchFmaProbe(out.as<float>(), iterations, blocks, threads, s),
        "running the FMA probe");
    RETURN_IF_ERROR(timer->Stop(0, s));
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s), "running the FMA probe");
    ASSIGN_OR_RETURN(const double us, timer->ElapsedUs(0));
    if (i > 0 && (best_fma_us == 0 || us < best_fma_us)) best_fma_us = us;
  }
  if (best_fma_us > 0) {
    const double flops = 2.0 * 8 * iterations * double(blocks) * threads;
    spec->set_measured_fp32_tflops(flops / (best_fma_us * 1e-6) / 1e12);
  }

  // Launch-latency floor: one warp doing no work, timed with events like
  // every kernel; the median of 21 samples.
  std::vector<double> empty_us;
  for (int i = 0; i < 22; ++i) {
    RETURN_IF_ERROR(timer->Start(0, s));
    CUDA_RETURN_IF_ERROR(LaunchFmaProbe(out.as<float>(), 0, 1, 32, s),
                         "running the launch probe");
    RETURN_IF_ERROR(timer->Stop(0, s));
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s), "running the launch probe");
    ASSIGN_OR_RETURN(const double us, timer->ElapsedUs(0));
    if (i > 0) empty_us.push_back(us);
  }
  std::nth_element(empty_us.begin(), empty_us.begin() + empty_us.size() / 2,
                   empty_us.end());
  spec->set_measured_launch_us(empty_us[empty_us.size() / 2]);
  return absl::OkStatus();
}

}  // namespace kbench
