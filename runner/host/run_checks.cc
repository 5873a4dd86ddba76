#include "runner/host/run_checks.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace kbench {

uint64_t InputChecksum(const void* data, size_t n) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string DescribeInputChange(const std::string& tensor, uint64_t before,
                                uint64_t after) {
  if (before == after) return "";
  return absl::StrFormat(
      "modified input '%s': its contents changed during the kernel's run "
      "(checksum %016x before, %016x after). Inputs are read-only; write "
      "only to outputs and workspaces",
      tensor, before, after);
}

std::string CompareRuns(const double* first, const double* second, int64_t n,
                        const v1::Tolerance& tolerance,
                        const OutputLayout& layout, bool show_index) {
  int64_t differ = 0, nan_one = 0, first_at = -1;
  double max_abs = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double a = first[i], b = second[i];
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na && nb) continue;  // Both unwritten: the comparison reports it.
    if (na != nb) {
      ++nan_one;
      ++differ;
      if (first_at < 0) first_at = i;
      continue;
    }
    const double d = std::fabs(a - b);
    if (d == 0) continue;
    max_abs = std::max(max_abs, d);
    const double scale = std::max(std::fabs(a), std::fabs(b));
    if (!(d <= tolerance.atol() + tolerance.rtol() * scale)) {
      ++differ;
      if (first_at < 0) first_at = i;
    }
  }
  if (differ == 0) return "";
  std::string out = absl::StrFormat(
      "the two runs of the same inputs differed: %d of %d elements (max abs "
      "difference %.3g, %d written in one run only)",
      differ, n, max_abs, nan_one);
  if (show_index) {
    const int64_t i = first_at;
    std::vector<int64_t> idx(layout.extents.size());
    int64_t flat = i;
    for (size_t ax = layout.extents.size(); ax-- > 0;) {
      const int64_t e = std::max<int64_t>(layout.extents[ax], 1);
      idx[ax] = flat % e;
      flat /= e;
    }
    std::string where;
    for (size_t ax = 0; ax < idx.size() && ax < layout.index_names.size();
         ++ax) {
      absl::StrAppend(&where, ax ? " " : "", layout.index_names[ax], "=",
                      idx[ax]);
    }
    if (where.empty()) where = absl::StrCat("i=", i);
    absl::StrAppend(&out, "; first at ", where);
  }
  absl::StrAppend(&out,
                  ". A data race or nondeterminism: check for missing "
                  "atomics, barriers, or reads of memory another block "
                  "writes");
  return out;
}

namespace {

double Ratio(const v1::Stats& reference, const v1::Stats& kernel) {
  return reference.n() > 0 && kernel.n() > 0 && kernel.median_us() > 0
             ? reference.median_us() / kernel.median_us()
             : 0;
}

}  // namespace

void SetSpeedups(v1::TimingReport* t) {
  t->set_speedup_events(Ratio(t->reference(), t->kernel()));
  t->set_speedup_gpu(Ratio(t->reference_gpu(), t->kernel_gpu()));
  t->set_speedup_graph(Ratio(t->reference_graph(), t->kernel_graph()));
  // GPU time is the basis Nsight Compute agrees with; events when CUPTI
  // could not time both sides (e.g. under a profiler).
  if (t->speedup_gpu() > 0) {
    t->set_speedup_basis(v1::TIMING_BASIS_GPU_TIME);
    t->set_speedup(t->speedup_gpu());
  } else {
    t->set_speedup_basis(v1::TIMING_BASIS_EVENTS);
    t->set_speedup(t->speedup_events());
  }
}

absl::Status SanityCheckTolerance(const double* golden, int64_t n,
                                  const v1::Tolerance& tolerance,
                                  const std::string& where) {
  if (n < kMinSanityElements) return absl::OkStatus();
  double mean = 0;
  for (int64_t i = 0; i < n; ++i) mean += golden[i];
  mean /= static_cast<double>(n);
  const OutputLayout layout;
  for (const double c : {0.0, mean}) {
    std::vector<double> trivial(n, c);
    v1::TrialResult t;
    CompareOutput(trivial.data(), golden, n, tolerance, layout, &t);
    if (t.passed()) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "the problem's check is too weak on shape %s: a constant output "
          "of %.6g passes (atol %g, rtol %g, max_rel_norm %g). Tighten the "
          "problem's tolerance or widen its input distribution",
          where, c, tolerance.atol(), tolerance.rtol(),
          tolerance.max_rel_norm()));
    }
  }
  return absl::OkStatus();
}

double PhysicalFloorUs(double flops, double min_bytes, const v1::GpuSpec& spec,
                       bool half_precision) {
  const double gbps =
      spec.measured_copy_gbps() > 0
          ? std::max(spec.measured_copy_gbps(), spec.datasheet_memory_gbps())
          : spec.datasheet_memory_gbps();
  const double tflops =
      half_precision ? spec.datasheet_bf16_tflops()
      : spec.measured_fp32_tflops() > 0
          ? std::max(spec.measured_fp32_tflops(), spec.datasheet_fp32_tflops())
          : spec.datasheet_fp32_tflops();
  double floor_us = 0;
  if (gbps > 0 && min_bytes > 0) {
    floor_us = std::max(floor_us, min_bytes / (gbps * 1e9) * 1e6);
  }
  if (tflops > 0 && flops > 0) {
    floor_us = std::max(floor_us, flops / (tflops * 1e12) * 1e6);
  }
  return floor_us;
}

std::string CheckTimeFloor(double median_us, double floor_us) {
  if (floor_us <= 0 || median_us <= 0 || median_us >= 0.9 * floor_us) {
    return "";
  }
  return absl::StrFormat(
      "impossible: faster than the physical floor (median %.3g us, floor "
      "%.3g us from the problem's minimum bytes over the peak bandwidth and "
      "its FLOPs over the peak rate). The kernel must not skip work or "
      "reuse results across calls",
      median_us, floor_us);
}

std::string ThrottleNote(double before_mhz, double after_mhz, int max_mhz) {
  if (before_mhz > 0 && after_mhz > 0 && after_mhz < 0.9 * before_mhz) {
    return absl::StrFormat(
        "clock dropped from %.0f to %.0f MHz during timing: results may be "
        "pessimistic",
        before_mhz, after_mhz);
  }
  const double low = std::min(before_mhz > 0 ? before_mhz : 1e18,
                              after_mhz > 0 ? after_mhz : 1e18);
  if (max_mhz > 0 && low < 1e18 && low < 0.7 * max_mhz) {
    return absl::StrFormat(
        "SM clock %.0f MHz is far below the maximum of %d MHz during timing: "
        "results may be pessimistic",
        low, max_mhz);
  }
  return "";
}

}  // namespace kbench
