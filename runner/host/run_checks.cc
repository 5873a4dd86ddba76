#include "runner/host/run_checks.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace kbench {

uint64_t KeyedChecksum(const void* data, size_t n, uint64_t key) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint64_t sum = 0;
  for (size_t i = 0; i * 4 < n; ++i) {
    uint32_t word = 0;
    for (size_t j = 0; j < 4 && i * 4 + j < n; ++j) {
      word |= static_cast<uint32_t>(p[i * 4 + j]) << (8 * j);
    }
    sum += ChecksumWord(key, i, word);
  }
  return sum;
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

std::string DescribeRunDiff(const RunDiff& d, int64_t n,
                            const OutputLayout& layout, bool show_index) {
  if (d.differ == 0) return "";
  std::string out = absl::StrFormat(
      "the two runs of the same inputs differed: %d of %d elements (max abs "
      "difference %.3g, %d written in one run only)",
      d.differ, n, d.max_abs, d.nan_one);
  if (show_index) {
    absl::StrAppend(&out, "; first at ", FormatIndex(d.first, layout));
  }
  absl::StrAppend(&out,
                  ". A data race or nondeterminism: check for missing "
                  "atomics, barriers, or reads of memory another block "
                  "writes");
  return out;
}

std::string CompareRuns(const double* first, const double* second, int64_t n,
                        const v1::Tolerance& tolerance,
                        const OutputLayout& layout, bool show_index) {
  RunDiff d = ZeroRunDiff();
  for (int64_t i = 0; i < n; ++i) {
    AddRunDiff(first[i], second[i], i, tolerance.atol(), tolerance.rtol(), &d);
  }
  return DescribeRunDiff(d, n, layout, show_index);
}

namespace {

double Ratio(const v1::Stats& reference, const v1::Stats& kernel) {
  return reference.n() > 0 && kernel.n() > 0 && kernel.median_us() > 0
             ? reference.median_us() / kernel.median_us()
             : 0;
}

}  // namespace

std::string DescribeTimedOutputWrong(absl::string_view which,
                                     absl::string_view where,
                                     const v1::TrialResult& check) {
  return absl::StrFormat(
      "the output of the timed runs was wrong (%s) on %s: %d of %d outputs "
      "outside tolerance (max abs error %.3g, rel-norm error %.3g, %d NaN or "
      "unwritten). The kernel must compute the full result on every call",
      which, where, check.mismatches(), check.elements(), check.max_abs_error(),
      check.rel_norm_error(), check.nan_count());
}

void AddGpuTimeNote(v1::TimingReport* t, absl::string_view why) {
  std::string* note = t->mutable_gpu_time_note();
  absl::StrAppend(note, note->empty() ? "" : "; ", why);
}

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
  // Against the expert baseline on the same basis (0 when it has none, or
  // none on that basis).
  t->set_speedup_vs_expert(t->speedup_basis() == v1::TIMING_BASIS_GPU_TIME
                               ? Ratio(t->expert_gpu(), t->kernel_gpu())
                               : Ratio(t->expert(), t->kernel()));
}

absl::Status SanityVerdict(const OutputErrors& zero,
                           const OutputErrors& mean_errors, double mean,
                           int64_t n, const v1::Tolerance& tolerance,
                           const std::string& where) {
  if (n < kMinSanityElements) return absl::OkStatus();
  const OutputLayout layout;
  for (const auto& [c, errors] :
       {std::pair<double, const OutputErrors*>{0.0, &zero},
        std::pair<double, const OutputErrors*>{mean, &mean_errors}}) {
    v1::TrialResult t;
    FinishOutputCompare(*errors, n, tolerance, layout, &t);
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

absl::Status SanityCheckTolerance(const double* golden, int64_t n,
                                  const v1::Tolerance& tolerance,
                                  const std::string& where) {
  if (n < kMinSanityElements) return absl::OkStatus();
  double mean = 0;
  for (int64_t i = 0; i < n; ++i) mean += golden[i];
  mean /= static_cast<double>(n);
  OutputErrors zero = ZeroOutputErrors(), constant = ZeroOutputErrors();
  for (int64_t i = 0; i < n; ++i) {
    AddOutputError(0.0, golden[i], i, tolerance.atol(), tolerance.rtol(),
                   &zero);
    AddOutputError(mean, golden[i], i, tolerance.atol(), tolerance.rtol(),
                   &constant);
  }
  return SanityVerdict(zero, constant, mean, n, tolerance, where);
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
