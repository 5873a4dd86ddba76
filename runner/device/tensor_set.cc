#include "runner/device/tensor_set.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "contract/expr.h"
#include "contract/problem_util.h"
#include "runner/device/cuda_status.h"
#include "runner/device/device_checks.h"
#include "runner/device/harness_kernels.h"
#include "runner/host/guard_pattern.h"
#include "runner/host/run_checks.h"

namespace kbench {

absl::StatusOr<TensorSet> TensorSet::Allocate(const v1::Problem& problem,
                                              const DimValues& dims) {
  TensorSet set;
  set.dims_ = dims;
  // Drawn here, never given to a kernel: see InputChecksums.
  std::random_device entropy;
  set.checksum_key_ = (uint64_t(entropy()) << 32) ^ entropy();
  for (const v1::TensorSpec& spec : problem.tensors()) {
    Tensor t;
    t.spec = &spec;
    ASSIGN_OR_RETURN(t.extents, TensorExtents(spec, dims));
    ASSIGN_OR_RETURN(t.elements, TensorElements(spec, dims));
    ASSIGN_OR_RETURN(t.buffer,
                     DeviceBuffer::AllocateGuarded(
                         t.elements * DTypeSize(spec.dtype()), kGuardBytes));
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
    const v1::InputDistribution& in = t.spec->input();
    const std::string what =
        absl::StrCat("filling input '", t.spec->name(), "'");
    switch (in.kind()) {
      case v1::InputDistribution::KIND_UNIFORM:
        CUDA_RETURN_IF_ERROR(
            LaunchFillUniform(t.buffer.get(), t.spec->dtype(), t.elements,
                              tensor_seed, static_cast<float>(in.low()),
                              static_cast<float>(in.high()), stream),
            what);
        break;
      case v1::InputDistribution::KIND_INTEGERS: {
        // Validated at load: int32, low < high at every public shape; a
        // drawn case is checked here.
        ASSIGN_OR_RETURN(const int64_t lo, EvalExpr(in.int_low(), dims_));
        ASSIGN_OR_RETURN(const int64_t hi, EvalExpr(in.int_high(), dims_));
        if (hi <= lo) {
          return absl::InvalidArgumentError(absl::StrCat(
              what, ": int_low ", lo, " >= int_high ", hi, " at this shape"));
        }
        CUDA_RETURN_IF_ERROR(LaunchFillIntegers(t.buffer.as<int>(), t.elements,
                                                tensor_seed, lo, hi, stream),
                             what);
        break;
      }
      default:
        CUDA_RETURN_IF_ERROR(
            LaunchFillWideRange(t.buffer.get(), t.spec->dtype(), t.elements,
                                tensor_seed, 1e-3f, 1.0f, stream),
            what);
    }
  }
  return absl::OkStatus();
}

absl::Status TensorSet::Upload(const std::string& name,
                               const std::vector<double>& values,
                               cudaStream_t stream) {
  const Tensor* t = Find(name);
  if (t == nullptr || static_cast<int64_t>(values.size()) != t->elements) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no tensor '", name, "' of ", values.size(), " elements to upload"));
  }
  ASSIGN_OR_RETURN(DeviceBuffer scratch,
                   DeviceBuffer::Allocate(values.size() * sizeof(double)));
  CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(scratch.get(), values.data(),
                                       values.size() * sizeof(double),
                                       cudaMemcpyHostToDevice, stream),
                       "uploading a tensor");
  CUDA_RETURN_IF_ERROR(LaunchFromDouble(scratch.as<double>(), t->buffer.get(),
                                        t->spec->dtype(), t->elements, stream),
                       absl::StrCat("converting '", name, "'"));
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream), "uploading a tensor");
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

absl::Status TensorSet::FillGuards(cudaStream_t stream) {
  static const std::vector<uint8_t> kBefore = GuardPattern(false);
  static const std::vector<uint8_t> kAfter = GuardPattern(true);
  for (Tensor& t : tensors_) {
    if (t.buffer.guard() != kGuardBytes) continue;
    CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(t.buffer.guard_before(), kBefore.data(), kGuardBytes,
                        cudaMemcpyHostToDevice, stream),
        "writing a guard region");
    CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(t.buffer.guard_after(), kAfter.data(), kGuardBytes,
                        cudaMemcpyHostToDevice, stream),
        "writing a guard region");
  }
  // The host patterns are static, but pageable copies may be staged: wait.
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream), "writing guard regions");
  return absl::OkStatus();
}

absl::Status TensorSet::CheckGuards(cudaStream_t stream,
                                    std::string* damage) const {
  damage->clear();
  std::vector<uint8_t> before(kGuardBytes), after(kGuardBytes);
  for (const Tensor& t : tensors_) {
    if (t.buffer.guard() != kGuardBytes) continue;
    CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(before.data(), t.buffer.guard_before(), kGuardBytes,
                        cudaMemcpyDeviceToHost, stream),
        "reading a guard region");
    CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(after.data(), t.buffer.guard_after(), kGuardBytes,
                        cudaMemcpyDeviceToHost, stream),
        "reading a guard region");
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream),
                         "reading guard regions");
    *damage = DescribeGuardDamage(
        t.spec->name(), static_cast<int64_t>(t.buffer.bytes()), before, after);
    if (!damage->empty()) return absl::OkStatus();
  }
  return absl::OkStatus();
}

absl::Status TensorSet::InputChecksums(cudaStream_t stream,
                                       std::vector<uint64_t>* sums) const {
  sums->clear();
  for (const Tensor& t : tensors_) {
    if (t.spec->role() != v1::TENSOR_ROLE_INPUT) continue;
    ASSIGN_OR_RETURN(const uint64_t sum,
                     DeviceKeyedChecksum(t.buffer.get(), t.buffer.bytes(),
                                         checksum_key_, stream));
    sums->push_back(sum);
  }
  return absl::OkStatus();
}

std::string TensorSet::DescribeInputChanges(
    const std::vector<uint64_t>& before,
    const std::vector<uint64_t>& after) const {
  size_t i = 0;
  for (const Tensor& t : tensors_) {
    if (t.spec->role() != v1::TENSOR_ROLE_INPUT) continue;
    if (i < before.size() && i < after.size()) {
      std::string change =
          DescribeInputChange(t.spec->name(), before[i], after[i]);
      if (!change.empty()) return change;
    }
    ++i;
  }
  return "";
}

const TensorSet::Tensor* TensorSet::Find(const std::string& name) const {
  for (const Tensor& t : tensors_) {
    if (t.spec->name() == name) return &t;
  }
  return nullptr;
}

}  // namespace kbench
