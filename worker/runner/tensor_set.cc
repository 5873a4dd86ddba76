#include "worker/runner/tensor_set.h"

#include "absl/strings/str_cat.h"
#include "common/problem_util.h"
#include "common/status_macros.h"
#include "worker/runner/cuda_status.h"
#include "worker/runner/harness_kernels.h"

namespace kbench {

absl::StatusOr<TensorSet> TensorSet::Allocate(const v1::Problem& problem,
                                              const DimValues& dims) {
  TensorSet set;
  set.dims_ = dims;
  for (const v1::TensorSpec& spec : problem.tensors()) {
    Tensor t;
    t.spec = &spec;
    ASSIGN_OR_RETURN(t.extents, TensorExtents(spec, dims));
    ASSIGN_OR_RETURN(t.elements, TensorElements(spec, dims));
    ASSIGN_OR_RETURN(
        t.buffer, DeviceBuffer::Allocate(t.elements * DTypeSize(spec.dtype())));
    set.tensors_.push_back(std::move(t));
  }
  return set;
}

absl::Status TensorSet::FillInputs(uint64_t seed, cudaStream_t stream) {
  uint64_t index = 0;
  for (Tensor& t : tensors_) {
    ++index;
    if (t.spec->role() != v1::TENSOR_ROLE_INPUT) continue;
    const uint64_t tensor_seed = seed ^ (0xA0761D6478BD642Full * index);
    CUDA_RETURN_IF_ERROR(
        LaunchFillUniform(t.buffer.get(), t.spec->dtype(), t.elements,
                          tensor_seed, -1.0f, 1.0f, stream),
        absl::StrCat("filling input '", t.spec->name(), "'"));
  }
  return absl::OkStatus();
}

absl::Status TensorSet::PoisonOutputs(cudaStream_t stream) {
  for (Tensor& t : tensors_) {
    if (t.spec->role() != v1::TENSOR_ROLE_OUTPUT) continue;
    CUDA_RETURN_IF_ERROR(
        LaunchFillNaN(t.buffer.get(), t.spec->dtype(), t.elements, stream),
        absl::StrCat("poisoning output '", t.spec->name(), "'"));
  }
  return absl::OkStatus();
}

absl::Status TensorSet::ReadAsDouble(const Tensor& tensor, cudaStream_t stream,
                                     std::vector<double>* out) const {
  ASSIGN_OR_RETURN(DeviceBuffer scratch,
                   DeviceBuffer::Allocate(tensor.elements * sizeof(double)));
  CUDA_RETURN_IF_ERROR(
      LaunchToDouble(tensor.buffer.get(), tensor.spec->dtype(),
                     scratch.as<double>(), tensor.elements, stream),
      "converting an output to fp64");
  out->resize(tensor.elements);
  CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(out->data(), scratch.get(),
                                       tensor.elements * sizeof(double),
                                       cudaMemcpyDeviceToHost, stream),
                       "copying an output to the host");
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream), "reading back an output");
  return absl::OkStatus();
}

const TensorSet::Tensor* TensorSet::Find(const std::string& name) const {
  for (const Tensor& t : tensors_) {
    if (t.spec->name() == name) return &t;
  }
  return nullptr;
}

}  // namespace kbench
