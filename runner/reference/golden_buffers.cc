#include "runner/reference/golden_buffers.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runner/device/cuda_status.h"

namespace kbench {

GoldenBuffers::~GoldenBuffers() {
  // Errors cannot be returned here; a sticky error leaves the context (and
  // with it the memory) unusable anyway. Work still queued on another
  // stream (an early return) must land before the zeros do.
  if (!buffers_.empty()) cudaDeviceSynchronize();
  for (auto& [name, buffer] : buffers_) {
    if (buffer.get() != nullptr && buffer.bytes() > 0) {
      cudaMemset(buffer.get(), 0, buffer.bytes());
    }
  }
  if (!buffers_.empty()) cudaDeviceSynchronize();
}

absl::Status GoldenBuffers::Copy(const std::string& name, const double* src,
                                 int64_t n, cudaStream_t stream) {
  ASSIGN_OR_RETURN(DeviceBuffer copy, DeviceBuffer::Allocate(n * 8));
  CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(copy.get(), src, n * 8, cudaMemcpyDeviceToDevice, stream),
      absl::StrCat("keeping the golden result of '", name, "' on the device"));
  Take(name, std::move(copy));
  return absl::OkStatus();
}

void GoldenBuffers::Take(const std::string& name, DeviceBuffer buffer) {
  buffers_[name] = std::move(buffer);
}

const double* GoldenBuffers::Find(const std::string& name) const {
  auto it = buffers_.find(name);
  return it == buffers_.end() ? nullptr : it->second.as<double>();
}

int64_t GoldenBuffers::Elements(const std::string& name) const {
  auto it = buffers_.find(name);
  return it == buffers_.end() ? 0
                              : static_cast<int64_t>(it->second.bytes() / 8);
}

absl::Status GoldenBuffers::Scrub(cudaStream_t stream) {
  for (auto& [name, buffer] : buffers_) {
    CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(buffer.get(), 0, buffer.bytes(), stream),
        "scrubbing the golden result");
  }
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream),
                       "scrubbing the golden result");
  buffers_.clear();
  return absl::OkStatus();
}

}  // namespace kbench
