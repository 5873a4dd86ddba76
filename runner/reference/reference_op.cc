#include "runner/reference/reference_op.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runner/device/cuda_status.h"
#include "runner/reference/golden_kernel_reference.h"

namespace kbench {

absl::Status ReferenceOp::Golden(
    const TensorSet& tensors,
    std::map<std::string, std::vector<double>>* golden) {
  GoldenBuffers device;
  RETURN_IF_ERROR(DeviceGolden(tensors, &device));
  for (const auto& [name, buffer] : device.buffers()) {
    std::vector<double>& out = (*golden)[name];
    out.resize(buffer.bytes() / 8);
    // DeviceGolden returns with its work done: the legacy stream is safe.
    CUDA_RETURN_IF_ERROR(cudaMemcpy(out.data(), buffer.get(), buffer.bytes(),
                                    cudaMemcpyDeviceToHost),
                         "copying the golden result");
  }
  return device.Scrub(nullptr);
}

absl::StatusOr<std::unique_ptr<ReferenceOp>> MakeReferenceOp(
    const v1::RunnerJob& job, DeviceContext* ctx) {
  if (job.problem().reference() != v1::REFERENCE_OP_GOLDEN_KERNEL) {
    return absl::UnimplementedError(
        absl::StrCat("this runner has no reference for problem '",
                     job.problem().name(), "' (op ", job.problem().reference(),
                     "): every problem's reference is its golden kernel"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<GoldenKernelReference> r,
                   GoldenKernelReference::Create(job, ctx));
  return std::unique_ptr<ReferenceOp>(std::move(r));
}

}  // namespace kbench
