// DeviceBuffer: one cudaMalloc'ed allocation, freed by the destructor.
// Ownership: owns the allocation; movable, not copyable.
// Thread safety: none; used by the runner's single thread.
#ifndef KBENCH_WORKER_RUNNER_DEVICE_BUFFER_H_
#define KBENCH_WORKER_RUNNER_DEVICE_BUFFER_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "absl/status/statusor.h"
#include "worker/runner/cuda_status.h"

namespace kbench {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { Reset(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      Reset();
      ptr_ = std::exchange(other.ptr_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Allocates `bytes` (at least 1, so every tensor has a distinct address).
  static absl::StatusOr<DeviceBuffer> Allocate(size_t bytes) {
    DeviceBuffer b;
    const size_t n = bytes == 0 ? 1 : bytes;
    const cudaError_t err = cudaMalloc(&b.ptr_, n);
    if (err != cudaSuccess) {
      return CudaRtStatus(err, "allocating device memory",
                          absl::StatusCode::kResourceExhausted);
    }
    b.bytes_ = bytes;
    return b;
  }

  void Reset() {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace kbench

#endif  // KBENCH_WORKER_RUNNER_DEVICE_BUFFER_H_
