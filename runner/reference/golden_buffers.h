// GoldenBuffers: a golden result on the device, one fp64 buffer per output
// name, for checks that run on the GPU (device_checks.h) and never copy a
// large result to the host.
//
// A golden result must not outlive the check that reads it: a candidate
// launched while it is in device memory could look for the answer there.
// Scrub() zeroes and frees every buffer; the destructor does the same for
// an early return (after waiting for the device, on the legacy stream).
//
// Ownership: owns its buffers; movable, not copyable. Thread safety: none
// (runner thread).
#ifndef KBENCH_RUNNER_REFERENCE_GOLDEN_BUFFERS_H_
#define KBENCH_RUNNER_REFERENCE_GOLDEN_BUFFERS_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "runner/device/device_buffer.h"

namespace kbench {

class GoldenBuffers {
 public:
  GoldenBuffers() = default;
  ~GoldenBuffers();
  GoldenBuffers(GoldenBuffers&&) = default;
  GoldenBuffers& operator=(GoldenBuffers&&) = delete;
  GoldenBuffers(const GoldenBuffers&) = delete;
  GoldenBuffers& operator=(const GoldenBuffers&) = delete;

  // Copies `n` fp64 values at device address `src` as output `name`'s
  // golden result (enqueued on `stream`; no sync).
  absl::Status Copy(const std::string& name, const double* src, int64_t n,
                    cudaStream_t stream);
  // Takes `buffer` (n fp64 values) as output `name`'s golden result.
  void Take(const std::string& name, DeviceBuffer buffer);

  // Output `name`'s values on the device, or nullptr.
  const double* Find(const std::string& name) const;
  // Its element count (0 when absent).
  int64_t Elements(const std::string& name) const;
  const std::map<std::string, DeviceBuffer>& buffers() const {
    return buffers_;
  }

  // Zeroes every buffer, waits, and frees them.
  absl::Status Scrub(cudaStream_t stream);

 private:
  std::map<std::string, DeviceBuffer> buffers_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_REFERENCE_GOLDEN_BUFFERS_H_
