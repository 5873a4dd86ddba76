#include "runner/device/cuda_status.h"

#include <cupti.h>

#include "absl/strings/str_cat.h"

namespace kbench {

bool IsStickyCudaError(int code) {
  switch (code) {
    case 214:  // ECC uncorrectable
    case 700:  // illegal address
    case 702:  // launch timeout
    case 709:  // context is destroyed
    case 710:  // device-side assert
    case 714:  // hardware stack error
    case 715:  // illegal instruction
    case 716:  // misaligned address
    case 717:  // invalid address space
    case 718:  // invalid program counter
    case 719:  // launch failure (trap)
    case 999:  // unknown
      return true;
    default:
      return false;
  }
}

absl::Status CudaRtStatus(cudaError_t err, absl::string_view during,
                          absl::StatusCode code) {
  const int value = static_cast<int>(err);
  const std::string text =
      absl::StrCat(cudaGetErrorName(err), " (", value,
                   "): ", cudaGetErrorString(err), ", while ", during);
  return absl::Status(
      IsStickyCudaError(value) ? absl::StatusCode::kAborted : code, text);
}

absl::Status CuStatus(const CudaDriver& driver, CUresult result,
                      absl::string_view during, absl::StatusCode code) {
  const int value = static_cast<int>(result);
  return absl::Status(
      IsStickyCudaError(value) ? absl::StatusCode::kAborted : code,
      absl::StrCat(driver.ErrorText(result), ", while ", during));
}

absl::Status CuptiStatus(CUptiResult result, absl::string_view during) {
  if (result == CUPTI_SUCCESS) return absl::OkStatus();
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) {
    text = "unknown CUPTI error";
  }
  std::string msg = absl::StrCat(during, ": ", text);
  if (result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
    absl::StrAppend(&msg,
                    " (the driver allows GPU performance counters to admin "
                    "users only: run the worker as root or set "
                    "NVreg_RestrictProfilingToAdminUsers=0)");
  }
  return absl::UnavailableError(msg);
}

}  // namespace kbench
