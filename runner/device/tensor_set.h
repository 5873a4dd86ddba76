// TensorSet: device buffers for every tensor of a problem at one shape,
// with seeded random inputs, NaN-poisoned outputs, and read-back as fp64.
// Every buffer has a guard region (kGuardBytes, runner/host/guard_pattern.h)
// before and after it, filled with a canary pattern by FillGuards and
// checked by CheckGuards, to catch out-of-bounds writes; InputChecksums
// catches writes into inputs.
//
// Ownership: owns its buffers. Thread safety: none (runner thread only).
#ifndef KBENCH_RUNNER_DEVICE_TENSOR_SET_H_
#define KBENCH_RUNNER_DEVICE_TENSOR_SET_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "contract/expr.h"
#include "kbench/v1/problem.pb.h"
#include "runner/device/device_buffer.h"

namespace kbench {

class TensorSet {
 public:
  struct Tensor {
    const v1::TensorSpec* spec = nullptr;  // Owned by the problem.
    std::vector<int64_t> extents;
    int64_t elements = 0;
    DeviceBuffer buffer;
  };

  // Allocates every tensor of `problem` at `dims`. The problem must outlive
  // the set.
  static absl::StatusOr<TensorSet> Allocate(const v1::Problem& problem,
                                            const DimValues& dims);

  // Fills every input from `seed` (each tensor its own stream of numbers)
  // as its InputDistribution says; by default with values of random sign
  // and magnitudes log-uniform in [1e-3, 1): three decades of dynamic
  // range, never zero, and small enough that fp32 accumulation stays well
  // within the problem's tolerance.
  absl::Status FillInputs(uint64_t seed, cudaStream_t stream);
  // Sets tensor `name` to `values` (one per element, rounded to its dtype;
  // a check case's inputs). Synchronizes the stream.
  absl::Status Upload(const std::string& name,
                      const std::vector<double>& values, cudaStream_t stream);
  // Writes the canary pattern into the guard regions of every tensor.
  absl::Status FillGuards(cudaStream_t stream);
  // Reads every guard region back (synchronizes the stream). Sets *damage
  // to "" when all are intact, else to the first damaged tensor's
  // description ("out of bounds: ... 'out' ...").
  absl::Status CheckGuards(cudaStream_t stream, std::string* damage) const;
  // The keyed checksum of each input's bytes (KeyedChecksum, computed on
  // the device), in tensor order (synchronizes). The key is drawn per set
  // from the host's entropy and passed to no candidate, so a kernel cannot
  // change an input and keep its checksum.
  absl::Status InputChecksums(cudaStream_t stream,
                              std::vector<uint64_t>* sums) const;
  // "" when `before` and `after` (from InputChecksums) agree, else the
  // "modified input 'x' ..." line of the first changed input.
  std::string DescribeInputChanges(const std::vector<uint64_t>& before,
                                   const std::vector<uint64_t>& after) const;
  // Writes NaN into every output, so unwritten elements fail.
  absl::Status PoisonOutputs(cudaStream_t stream);
  // Copies `tensor` to the host as fp64 (synchronizes the stream).
  absl::Status ReadAsDouble(const Tensor& tensor, cudaStream_t stream,
                            std::vector<double>* out) const;

  // The tensor or nullptr.
  const Tensor* Find(const std::string& name) const;
  const std::vector<Tensor>& tensors() const { return tensors_; }
  const DimValues& dims() const { return dims_; }

 private:
  DimValues dims_;
  std::vector<Tensor> tensors_;
  uint64_t checksum_key_ = 0;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_DEVICE_TENSOR_SET_H_
