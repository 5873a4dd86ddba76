#include "server/core/worker_info_check.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "base/untrusted_input.h"

namespace kbench {
namespace {

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * kKiB;
constexpr int64_t kGiB = 1024 * kMiB;
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// `value` within [lo, hi]; with `unknown_ok`, 0 (not reported) too.
absl::Status InRange(absl::string_view field, int64_t value, int64_t lo,
                     int64_t hi, bool unknown_ok = true) {
  if ((unknown_ok && value == 0) || (value >= lo && value <= hi)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("worker.spec.", field, " is ", value, "; a GPU has ", lo,
                   " to ", hi, unknown_ok ? " (or 0 when unknown)" : "",
                   ". Report the facts the driver gives (kbrunner does)"));
}

absl::Status FiniteIn(absl::string_view field, double value, double hi) {
  if (std::isfinite(value) && value >= 0 && value <= hi) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("worker.spec.", field, " is ",
                                                 value,
                                                 "; it must be a finite number "
                                                 "from 0 to ",
                                                 hi));
}

absl::Status Dims(absl::string_view field,
                  const google::protobuf::RepeatedField<int64_t>& dims,
                  const int64_t (&lo)[3], int64_t hi) {
  if (dims.empty()) return absl::OkStatus();
  if (dims.size() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("worker.spec.", field, " has ", dims.size(),
                     " values; it must have 3 (x, y, z) or none"));
  }
  for (int i = 0; i < 3; ++i) {
    RETURN_IF_ERROR(InRange(absl::StrCat(field, "[", i, "]"), dims[i], lo[i],
                            hi, /*unknown_ok=*/false));
  }
  return absl::OkStatus();
}

absl::Status ValidateSpec(const v1::GpuSpec& s) {
  if (s.name().empty()) {
    return absl::InvalidArgumentError(
        "worker.spec.name is empty; report the GPU's name");
  }
  RETURN_IF_ERROR(ValidateText(s.name(), 256, "worker.spec.name"));
  RETURN_IF_ERROR(ValidateText(s.uuid(), 128, "worker.spec.uuid"));
  RETURN_IF_ERROR(
      ValidateText(s.driver_version(), 64, "worker.spec.driver_version"));
  RETURN_IF_ERROR(
      ValidateText(s.runtime_version(), 64, "worker.spec.runtime_version"));
  RETURN_IF_ERROR(
      ValidateText(s.nvrtc_version(), 64, "worker.spec.nvrtc_version"));
  RETURN_IF_ERROR(
      ValidateText(s.datasheet_name(), 128, "worker.spec.datasheet_name"));
  if (!IsGpuArch(s.arch())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker.spec.arch '", absl::CHexEscape(s.arch().substr(0, 32)),
        "' is not a GPU architecture like sm_90"));
  }
  RETURN_IF_ERROR(InRange("cc_major", s.cc_major(), 1, 99));
  RETURN_IF_ERROR(InRange("cc_minor", s.cc_minor(), 0, 9));
  if (s.cc_major() > 0) {
    // "sm_90a" -> 90; IsGpuArch has checked the form.
    absl::string_view num = absl::string_view(s.arch()).substr(3);
    if (num.back() == 'a' || num.back() == 'f') num.remove_suffix(1);
    int digits = 0;
    if (!absl::SimpleAtoi(num, &digits) ||
        digits != s.cc_major() * 10 + s.cc_minor()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "worker.spec.arch ", s.arch(), " does not match compute capability ",
          s.cc_major(), ".", s.cc_minor()));
    }
  }
  RETURN_IF_ERROR(InRange("sm_count", s.sm_count(), 1, 1024, false));
  RETURN_IF_ERROR(InRange("max_threads_per_block", s.max_threads_per_block(),
                          64, 4096, false));
  RETURN_IF_ERROR(InRange("sm_clock_mhz", s.sm_clock_mhz(), 100, 10000));
  RETURN_IF_ERROR(
      InRange("memory_clock_mhz", s.memory_clock_mhz(), 100, 100000));
  RETURN_IF_ERROR(InRange("memory_bus_bits", s.memory_bus_bits(), 32, 16384));
  RETURN_IF_ERROR(
      InRange("memory_bytes", s.memory_bytes(), 256 * kMiB, 64 * 1024 * kGiB));
  RETURN_IF_ERROR(InRange("l2_bytes", s.l2_bytes(), 64 * kKiB, 4 * kGiB));
  RETURN_IF_ERROR(InRange("regs_per_sm", s.regs_per_sm(), 8192, 1 << 22));
  RETURN_IF_ERROR(InRange("regs_per_block", s.regs_per_block(), 8192, 1 << 22));
  RETURN_IF_ERROR(InRange("smem_per_sm_bytes", s.smem_per_sm_bytes(), 16 * kKiB,
                          64 * kMiB));
  RETURN_IF_ERROR(InRange("smem_per_block_bytes", s.smem_per_block_bytes(),
                          16 * kKiB, 16 * kMiB));
  RETURN_IF_ERROR(
      InRange("smem_per_block_optin_bytes", s.smem_per_block_optin_bytes(),
              std::max(16 * kKiB, s.smem_per_block_bytes()), 16 * kMiB));
  RETURN_IF_ERROR(InRange("reserved_smem_per_block_bytes",
                          s.reserved_smem_per_block_bytes(), 0, 64 * kKiB));
  RETURN_IF_ERROR(
      InRange("max_threads_per_sm", s.max_threads_per_sm(), 64, 65536));
  RETURN_IF_ERROR(InRange("max_blocks_per_sm", s.max_blocks_per_sm(), 1, 1024));
  RETURN_IF_ERROR(InRange("warp_size", s.warp_size(), 32, 32));
  RETURN_IF_ERROR(InRange("pci_bus_id", s.pci_bus_id(), 0, 65535));
  RETURN_IF_ERROR(
      Dims("max_block_dims", s.max_block_dims(), {64, 64, 1}, 4096));
  RETURN_IF_ERROR(
      Dims("max_grid_dims", s.max_grid_dims(), {65535, 1024, 1024}, kInt32Max));
  RETURN_IF_ERROR(
      FiniteIn("theoretical_memory_gbps", s.theoretical_memory_gbps(), 1e6));
  RETURN_IF_ERROR(FiniteIn("measured_copy_gbps", s.measured_copy_gbps(), 1e6));
  RETURN_IF_ERROR(
      FiniteIn("measured_fp32_tflops", s.measured_fp32_tflops(), 1e5));
  RETURN_IF_ERROR(
      FiniteIn("datasheet_memory_gbps", s.datasheet_memory_gbps(), 1e6));
  RETURN_IF_ERROR(
      FiniteIn("datasheet_fp32_tflops", s.datasheet_fp32_tflops(), 1e5));
  RETURN_IF_ERROR(
      FiniteIn("datasheet_bf16_tflops", s.datasheet_bf16_tflops(), 1e6));
  RETURN_IF_ERROR(FiniteIn("measured_launch_us", s.measured_launch_us(), 1e6));
  return absl::OkStatus();
}

// What a worker says of its links to the host's other GPUs.
absl::Status ValidateLinks(const v1::WorkerInfo& info) {
  // More than any one host has; each link is shown and stored.
  constexpr int kMaxLinks = 64;
  // Above any link's bandwidth (NVLink 5 is 1.8 TB/s a GPU).
  constexpr double kMaxLinkGbps = 100000;
  if (info.links_size() > kMaxLinks) {
    return absl::InvalidArgumentError(
        absl::StrCat("worker.links has ", info.links_size(),
                     " entries; at most ", kMaxLinks, " (one per other GPU)"));
  }
  std::set<int> peers;
  for (int i = 0; i < info.links_size(); ++i) {
    const v1::GpuLink& l = info.links(i);
    const std::string field = absl::StrCat("worker.links[", i, "]");
    if (l.peer_gpu_index() < 0 || l.peer_gpu_index() > 1023 ||
        l.peer_gpu_index() == info.gpu_index() ||
        !peers.insert(l.peer_gpu_index()).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".peer_gpu_index is ", l.peer_gpu_index(),
          "; it must be another GPU of the host (0 to 1023, not this one's ",
          info.gpu_index(), "), once"));
    }
    if (l.performance_rank() < 0 || l.performance_rank() > 1000 ||
        !std::isfinite(l.copy_gbps()) || l.copy_gbps() < 0 ||
        l.copy_gbps() > kMaxLinkGbps) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " has performance_rank ", l.performance_rank(),
                       " and copy_gbps ", l.copy_gbps(),
                       "; they must be 0 to 1000 and 0 to ", kMaxLinkGbps));
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool IsGpuArch(absl::string_view arch) {
  if (!absl::ConsumePrefix(&arch, "sm_")) return false;
  if (!arch.empty() && (arch.back() == 'a' || arch.back() == 'f')) {
    arch.remove_suffix(1);
  }
  if (arch.size() < 2 || arch.size() > 3 || arch.front() == '0') return false;
  for (char c : arch) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

absl::Status ValidateWorkerInfo(const v1::WorkerInfo& info) {
  RETURN_IF_ERROR(ValidateJobId(info.worker_id(), "worker.worker_id", ""));
  if (!info.instance_id().empty()) {
    RETURN_IF_ERROR(
        ValidateJobId(info.instance_id(), "worker.instance_id", ""));
  }
  RETURN_IF_ERROR(ValidateText(info.hostname(), 255, "worker.hostname"));
  // Empty is allowed: a host without a machine id.
  RETURN_IF_ERROR(ValidateSessionId(info.host_id(), "worker.host_id", ""));
  RETURN_IF_ERROR(ValidateText(info.version(), 128, "worker.version"));
  // RunnerJob's fields and what a result means change between versions, and
  // the same request will never pass: the worker stops on InvalidArgument.
  if (info.version() != KBENCH_VERSION) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker.version is '", info.version(), "' but this kbd is ",
        KBENCH_VERSION,
        "; the worker protocol changes between versions, so run the kbworker "
        "(and kbrunner) of the same kbench build as kbd"));
  }
  if (info.gpu_index() < 0 || info.gpu_index() > 1023) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker.gpu_index is ", info.gpu_index(), "; it must be 0 to 1023"));
  }
  RETURN_IF_ERROR(ValidateLinks(info));
  if (!info.has_spec()) {
    return absl::InvalidArgumentError(
        "worker.spec is missing; a worker reports its GPU's facts (kbrunner's "
        "hello) with every lease request");
  }
  return ValidateSpec(info.spec());
}

}  // namespace kbench
