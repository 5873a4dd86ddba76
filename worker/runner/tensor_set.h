// TensorSet: device buffers for every tensor of a problem at one shape,
// with seeded random inputs, NaN-poisoned outputs, and read-back as fp64.
//
// Ownership: owns its buffers. Thread safety: none (runner thread only).
#ifndef KBENCH_WORKER_RUNNER_TENSOR_SET_H_
#define KBENCH_WORKER_RUNNER_TENSOR_SET_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/expr.h"
#include "kbench/v1/problem.pb.h"
#include "worker/runner/device_buffer.h"

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

  // Fills every input with uniform values in [-1, 1) from `seed` (each
  // tensor its own stream of numbers).
  absl::Status FillInputs(uint64_t seed, cudaStream_t stream);
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
};

}  // namespace kbench

#endif  // KBENCH_WORKER_RUNNER_TENSOR_SET_H_
