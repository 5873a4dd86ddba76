// CudaDriver: the few CUDA driver API entry points the runner needs (module
// loading, launches, function attributes, occupancy), resolved at run time
// through cudaGetDriverEntryPointByVersion. The runner links cudart
// statically and never links libcuda, so it (and the tests linking it) load
// on hosts without an NVIDIA driver and report that plainly.
//
// Thread safety: immutable after Load(); safe to share.
#ifndef KBENCH_RUNNER_DEVICE_CUDA_DRIVER_H_
#define KBENCH_RUNNER_DEVICE_CUDA_DRIVER_H_

#include <cuda.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kbench {

class CudaDriver {
 public:
  // Resolves every entry point. FailedPrecondition when cudart finds no
  // driver; Internal when an entry point is missing (driver too old).
  static absl::StatusOr<CudaDriver> Load();

  // "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered".
  std::string ErrorText(CUresult result) const;

  decltype(&::cuModuleLoadData) ModuleLoadData = nullptr;
  decltype(&::cuModuleUnload) ModuleUnload = nullptr;
  decltype(&::cuModuleGetFunction) ModuleGetFunction = nullptr;
  decltype(&::cuLaunchKernel) LaunchKernel = nullptr;
  decltype(&::cuFuncGetAttribute) FuncGetAttribute = nullptr;
  decltype(&::cuFuncSetAttribute) FuncSetAttribute = nullptr;
  decltype(&::cuFuncGetParamInfo) FuncGetParamInfo = nullptr;
  decltype(&::cuOccupancyMaxActiveBlocksPerMultiprocessor)
      OccupancyMaxActiveBlocksPerMultiprocessor = nullptr;
  decltype(&::cuCtxResetPersistingL2Cache) CtxResetPersistingL2Cache = nullptr;
  decltype(&::cuCtxGetCurrent) CtxGetCurrent = nullptr;
  decltype(&::cuGetErrorName) GetErrorName = nullptr;
  decltype(&::cuGetErrorString) GetErrorString = nullptr;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_DEVICE_CUDA_DRIVER_H_
