// DeviceBuffer: one cudaMalloc'ed allocation, freed by the destructor.
// A guarded buffer has `guard` bytes of allocation before and after its
// payload (AllocateGuarded); get() and bytes() are the payload's.
// Ownership: owns the allocation; movable, not copyable.
// Thread safety: none; used by the runner's single thread.
#ifndef KBENCH_RUNNER_DEVICE_DEVICE_BUFFER_H_
#define KBENCH_RUNNER_DEVICE_DEVICE_BUFFER_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "absl/status/statusor.h"
#include "runner/device/cuda_status.h"

namespace kbench {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { Reset(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)),
        guard_(std::exchange(other.guard_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      Reset();
      ptr_ = std::exchange(other.ptr_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
      guard_ = std::exchange(other.guard_, 0);
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

  // Allocates `bytes` with `guard` bytes before and after; `guard` must be
  // a multiple of 256 so the payload keeps cudaMalloc's alignment.
  static absl::StatusOr<DeviceBuffer> AllocateGuarded(size_t bytes,
                                                      size_t guard) {
    DeviceBuffer b;
    void* base = nullptr;
    const cudaError_t err = cudaMalloc(&base, bytes + 2 * guard);
    if (err != cudaSuccess) {
      return CudaRtStatus(err, "allocating device memory",
                          absl::StatusCode::kResourceExhausted);
    }
    b.ptr_ = static_cast<char*>(base) + guard;
    b.bytes_ = bytes;
    b.guard_ = guard;
    return b;
  }

  void Reset() {
    if (ptr_ != nullptr) cudaFree(static_cast<char*>(ptr_) - guard_);
    ptr_ = nullptr;
    bytes_ = 0;
    guard_ = 0;
  }

  // Guard bytes on each side (0 for a plain buffer).
  size_t guard() const { return guard_; }
  // The first byte of the guard before / after the payload.
  void* guard_before() const { return static_cast<char*>(ptr_) - guard_; }
  void* guard_after() const { return static_cast<char*>(ptr_) + bytes_; }

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  size_t guard_ = 0;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_DEVICE_DEVICE_BUFFER_H_
