#include "runner/device/device_checks.h"

#include <vector>

#include "base/status_macros.h"
#include "runner/device/cuda_status.h"
#include "runner/device/device_buffer.h"

namespace kbench {
namespace {

// Launches `launch(partials)` over CheckBlocks(n) blocks and merges the
// partial results in block order into `total`.
template <typename T, typename Launch, typename Merge>
absl::Status Reduce(int64_t n, Launch launch, Merge merge, const char* what,
                    cudaStream_t stream, T* total) {
  const int blocks = CheckBlocks(n);
  ASSIGN_OR_RETURN(DeviceBuffer partials,
                   DeviceBuffer::Allocate(blocks * sizeof(T)));
  CUDA_RETURN_IF_ERROR(launch(partials.as<T>()), what);
  std::vector<T> host(blocks);
  CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(host.data(), partials.get(), blocks * sizeof(T),
                      cudaMemcpyDeviceToHost, stream),
      what);
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream), what);
  for (const T& p : host) merge(p, total);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<OutputErrors> DeviceOutputErrors(const void* out, int dtype,
                                                const double* golden, int64_t n,
                                                const v1::Tolerance& tolerance,
                                                cudaStream_t stream) {
  OutputErrors total = ZeroOutputErrors();
  RETURN_IF_ERROR(Reduce(
      n,
      [&](OutputErrors* partials) {
        return LaunchOutputErrors(out, dtype, 0.0, golden, n, tolerance.atol(),
                                  tolerance.rtol(), partials, stream);
      },
      [](const OutputErrors& b, OutputErrors* a) { MergeOutputErrors(b, a); },
      "comparing an output with the golden result", stream, &total));
  return total;
}

absl::StatusOr<OutputErrors> DeviceConstantErrors(
    double c, const double* golden, int64_t n, const v1::Tolerance& tolerance,
    cudaStream_t stream) {
  OutputErrors total = ZeroOutputErrors();
  RETURN_IF_ERROR(Reduce(
      n,
      [&](OutputErrors* partials) {
        return LaunchOutputErrors(nullptr, 0, c, golden, n, tolerance.atol(),
                                  tolerance.rtol(), partials, stream);
      },
      [](const OutputErrors& b, OutputErrors* a) { MergeOutputErrors(b, a); },
      "checking the problem's tolerance against a constant output", stream,
      &total));
  return total;
}

absl::StatusOr<RunDiff> DeviceRunDiff(const void* first, const void* second,
                                      int dtype, int64_t n,
                                      const v1::Tolerance& tolerance,
                                      cudaStream_t stream) {
  RunDiff total = ZeroRunDiff();
  RETURN_IF_ERROR(Reduce(
      n,
      [&](RunDiff* partials) {
        return LaunchRunDiff(first, second, dtype, n, tolerance.atol(),
                             tolerance.rtol(), partials, stream);
      },
      [](const RunDiff& b, RunDiff* a) { MergeRunDiff(b, a); },
      "comparing the two runs of a trial", stream, &total));
  return total;
}

absl::StatusOr<uint64_t> DeviceKeyedChecksum(const void* data, size_t bytes,
                                             uint64_t key,
                                             cudaStream_t stream) {
  uint64_t total = 0;
  const int64_t n = static_cast<int64_t>(bytes);
  RETURN_IF_ERROR(Reduce((n + 3) / 4,
                         [&](uint64_t* partials) {
                           return LaunchKeyedChecksum(data, n, key, partials,
                                                      stream);
                         },
                         [](const uint64_t& b, uint64_t* a) { *a += b; },
                         "checksumming an input", stream, &total));
  return total;
}

absl::StatusOr<ValueSummary> DeviceValueSummary(const double* values, int64_t n,
                                                cudaStream_t stream) {
  ValueSummary total{0, 0};
  RETURN_IF_ERROR(Reduce(
      n,
      [&](ValueSummary* partials) {
        return LaunchValueSummary(values, n, partials, stream);
      },
      [](const ValueSummary& b, ValueSummary* a) {
        a->sum += b.sum;
        a->nonfinite += b.nonfinite;
      },
      "summing the golden result", stream, &total));
  return total;
}

}  // namespace kbench
