#include "runner/device/device_context.h"

#include <nvrtc.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "runner/device/cuda_status.h"

namespace kbench {
namespace {

std::string VersionText(int v) {
  return absl::StrCat(v / 1000, ".", (v % 1000) / 10);
}

std::string UuidText(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  return absl::StrFormat(
      "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%"
      "02x",
      b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
      b[12], b[13], b[14], b[15]);
}

}  // namespace

absl::StatusOr<std::unique_ptr<DeviceContext>> DeviceContext::Create(
    const Options& options) {
  std::unique_ptr<DeviceContext> ctx(new DeviceContext());
  RETURN_IF_ERROR(ctx->Init(options));
  return ctx;
}

absl::Status DeviceContext::Init(const Options& options) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no CUDA device: ",
        err != cudaSuccess
            ? absl::StrCat(cudaGetErrorName(err), ": ", cudaGetErrorString(err))
            : "the driver reports 0 GPUs",
        ". Correctness, timing and profiling need an NVIDIA GPU."));
  }
  if (options.device < 0 || options.device >= count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device ", options.device, " does not exist; ", count, " visible"));
  }
  device_ = options.device;
  ASSIGN_OR_RETURN(driver_, CudaDriver::Load());
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device_), "selecting the device");
  // Creates the primary context, shared by the runtime and the driver API.
  CUDA_RETURN_IF_ERROR(cudaFree(nullptr), "creating the CUDA context");
  CUDA_RETURN_IF_ERROR(
      cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
      "creating the stream");
  if (!options.blas) return ReadSpec();
  if (cublasLtCreate(&cublaslt_) != CUBLAS_STATUS_SUCCESS) {
    return absl::InternalError("cublasLtCreate failed");
  }
  ASSIGN_OR_RETURN(lt_workspace_,
                   DeviceBuffer::Allocate(options.cublaslt_workspace_bytes));
  return ReadSpec();
}

absl::Status DeviceContext::ReadSpec() {
  cudaDeviceProp p;
  CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&p, device_),
                       "reading device properties");
  auto attr = [&](cudaDeviceAttr a) {
    int v = 0;
    cudaDeviceGetAttribute(&v, a, device_);
    return v;
  };
  spec_.set_name(p.name);
  spec_.set_uuid(UuidText(p.uuid));
  spec_.set_cc_major(p.major);
  spec_.set_cc_minor(p.minor);
  spec_.set_arch(absl::StrCat("sm_", p.major, p.minor));
  spec_.set_sm_count(p.multiProcessorCount);
  spec_.set_sm_clock_mhz(attr(cudaDevAttrClockRate) / 1000);
  spec_.set_memory_clock_mhz(attr(cudaDevAttrMemoryClockRate) / 1000);
  spec_.set_memory_bus_bits(attr(cudaDevAttrGlobalMemoryBusWidth));
  spec_.set_memory_bytes(static_cast<int64_t>(p.totalGlobalMem));
  spec_.set_l2_bytes(p.l2CacheSize);
  spec_.set_regs_per_sm(p.regsPerMultiprocessor);
  spec_.set_regs_per_block(p.regsPerBlock);
  spec_.set_smem_per_sm_bytes(p.sharedMemPerMultiprocessor);
  spec_.set_smem_per_block_bytes(p.sharedMemPerBlock);
  spec_.set_smem_per_block_optin_bytes(p.sharedMemPerBlockOptin);
  spec_.set_reserved_smem_per_block_bytes(p.reservedSharedMemPerBlock);
  spec_.set_max_threads_per_block(p.maxThreadsPerBlock);
  spec_.set_max_threads_per_sm(p.maxThreadsPerMultiProcessor);
  spec_.set_max_blocks_per_sm(p.maxBlocksPerMultiProcessor);
  spec_.set_warp_size(p.warpSize);
  for (int i = 0; i < 3; ++i) {
    spec_.add_max_block_dims(p.maxThreadsDim[i]);
    spec_.add_max_grid_dims(p.maxGridSize[i]);
  }
  int driver = 0, runtime = 0, nv_major = 0, nv_minor = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  nvrtcVersion(&nv_major, &nv_minor);
  spec_.set_driver_version(VersionText(driver));
  spec_.set_runtime_version(VersionText(runtime));
  spec_.set_nvrtc_version(absl::StrCat(nv_major, ".", nv_minor));
  // Double data rate: 2 transfers per memory clock.
  spec_.set_theoretical_memory_gbps(2.0 * spec_.memory_clock_mhz() * 1e6 *
                                    spec_.memory_bus_bits() / 8 / 1e9);
  spec_.set_pci_bus_id(p.pciBusID);
  return absl::OkStatus();
}

DeviceContext::~DeviceContext() {
  lt_workspace_.Reset();
  if (cublaslt_ != nullptr) cublasLtDestroy(cublaslt_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

}  // namespace kbench
