#include "runner/device/cuda_driver.h"

#include <cuda_runtime_api.h>

#include "absl/strings/str_cat.h"

namespace kbench {
namespace {

// Entry points are requested at the CUDA version the runner is built with.
constexpr unsigned int kCudaVersion = CUDA_VERSION;

template <typename Fn>
absl::Status Resolve(const char* name, Fn* fn) {
  void* ptr = nullptr;
  cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t err = cudaGetDriverEntryPointByVersion(
      name, &ptr, kCudaVersion, cudaEnableDefault, &query);
  if (err != cudaSuccess) {
    return absl::FailedPreconditionError(
        absl::StrCat("no usable NVIDIA driver: ", cudaGetErrorName(err), ": ",
                     cudaGetErrorString(err)));
  }
  if (query != cudaDriverEntryPointSuccess || ptr == nullptr) {
    return absl::InternalError(absl::StrCat(
        "the NVIDIA driver lacks ", name, " at CUDA ", kCudaVersion / 1000, ".",
        (kCudaVersion % 1000) / 10, "; update the driver"));
  }
  *fn = reinterpret_cast<Fn>(ptr);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CudaDriver> CudaDriver::Load() {
  CudaDriver d;
  absl::Status s;
#define KB_RESOLVE(field, name) \
  s = Resolve(name, &d.field);  \
  if (!s.ok()) return s;
  KB_RESOLVE(ModuleLoadData, "cuModuleLoadData");
  KB_RESOLVE(ModuleUnload, "cuModuleUnload");
  KB_RESOLVE(ModuleGetFunction, "cuModuleGetFunction");
  KB_RESOLVE(LaunchKernel, "cuLaunchKernel");
  KB_RESOLVE(FuncGetAttribute, "cuFuncGetAttribute");
  KB_RESOLVE(FuncSetAttribute, "cuFuncSetAttribute");
  KB_RESOLVE(FuncGetParamInfo, "cuFuncGetParamInfo");
  KB_RESOLVE(OccupancyMaxActiveBlocksPerMultiprocessor,
             "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  KB_RESOLVE(CtxResetPersistingL2Cache, "cuCtxResetPersistingL2Cache");
  KB_RESOLVE(CtxGetCurrent, "cuCtxGetCurrent");
  KB_RESOLVE(GetErrorName, "cuGetErrorName");
  KB_RESOLVE(GetErrorString, "cuGetErrorString");
#undef KB_RESOLVE
  return d;
}

std::string CudaDriver::ErrorText(CUresult result) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (GetErrorName == nullptr || GetErrorName(result, &name) != CUDA_SUCCESS) {
    name = "CUDA_ERROR_UNKNOWN";
  }
  if (GetErrorString == nullptr ||
      GetErrorString(result, &text) != CUDA_SUCCESS) {
    text = "unknown error";
  }
  return absl::StrCat(name, " (", static_cast<int>(result), "): ", text);
}

}  // namespace kbench
