#include "analysis/profile_analysis.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "analysis/profile_hints.h"
#include "base/units.h"
#include "google/protobuf/descriptor.h"

namespace kbench {
namespace {

// A launch's weight in time-weighted averages: its counted GPU time, else
// its median time.
double LaunchTimeUs(const v1::LaunchProfile& l) {
  if (l.has_counters() && l.counters().gpu_time_us() > 0) {
    return l.counters().gpu_time_us();
  }
  return l.time().median_us();
}

// A figure of a launch usable as a fact: present and not suspect.
std::optional<double> Fact(const v1::ProfileReport& p,
                           const v1::LaunchProfile& l,
                           absl::string_view figure) {
  if (SuspectReason(l, figure).has_value()) return std::nullopt;
  return CounterFigure(p, l, figure);
}

// The time-weighted average of a figure over the launches with counters;
// nullopt when any of them lacks it (a partial average would mislead).
std::optional<double> WeightedFact(const v1::ProfileReport& p,
                                   absl::string_view figure) {
  double sum = 0, weight = 0;
  bool any = false;
  for (const v1::LaunchProfile& l : p.launches()) {
    if (!l.has_counters()) continue;
    const std::optional<double> v = Fact(p, l, figure);
    if (!v.has_value()) return std::nullopt;
    const double w = std::max(LaunchTimeUs(l), 1e-9);
    sum += *v * w;
    weight += w;
    any = true;
  }
  if (!any) return std::nullopt;
  return sum / weight;
}

// The sum of a figure over the launches with counters; nullopt when any of
// them lacks it.
std::optional<double> SummedFact(const v1::ProfileReport& p,
                                 absl::string_view figure) {
  double sum = 0;
  bool any = false;
  for (const v1::LaunchProfile& l : p.launches()) {
    if (!l.has_counters()) continue;
    const std::optional<double> v = Fact(p, l, figure);
    if (!v.has_value()) return std::nullopt;
    sum += *v;
    any = true;
  }
  if (!any) return std::nullopt;
  return sum;
}

std::string Pct(double v) { return absl::StrFormat("%.0f%%", v); }

// Three significant digits, without an exponent from 100 up.
std::string Rate(double v) {
  if (std::fabs(v) >= 100) return absl::StrFormat("%.0f", v);
  return absl::StrFormat("%.3g", v);
}

const char* BoundPhrase(const std::string& bound) {
  if (bound == "memory") return "memory: min bytes / measured bandwidth";
  if (bound == "compute") return "compute: FLOPs / measured FP32 peak";
  return "launch latency";
}

void FillHeadroom(const v1::GpuSpec& gpu, v1::ProfileReport* p) {
  p->clear_headroom();
  const double mem =
      p->min_bytes() > 0 && gpu.measured_copy_gbps() > 0
          ? p->min_bytes() / (gpu.measured_copy_gbps() * 1e9) * 1e6
          : 0;
  const double comp =
      p->flops() > 0 && gpu.measured_fp32_tflops() > 0
          ? p->flops() / (gpu.measured_fp32_tflops() * 1e12) * 1e6
          : 0;
  const double launch = std::max(gpu.measured_launch_us(), 0.0);
  double floor = 0;
  std::string bound;
  const std::pair<double, const char*> terms[] = {
      {mem, "memory"}, {comp, "compute"}, {launch, "launch"}};
  for (const auto& [us, name] : terms) {
    if (us > floor) {
      floor = us;
      bound = name;
    }
  }
  if (floor <= 0) return;
  v1::Headroom* h = p->mutable_headroom();
  h->set_floor_us(floor);
  h->set_floor_bound(bound);
  h->set_memory_floor_us(mem);
  h->set_compute_floor_us(comp);
  h->set_launch_floor_us(launch);
  const double measured = p->timing().kernel().median_us() > 0
                              ? p->timing().kernel().median_us()
                              : p->total().median_us();
  const std::string floor_text =
      absl::StrCat(FormatDuration(floor), " floor (", BoundPhrase(bound), ")");
  if (measured <= 0) {
    h->set_note(absl::StrCat("the ", floor_text,
                             " is known but no kernel time was measured"));
    return;
  }
  h->set_measured_us(measured);
  h->set_ratio(measured / floor);
  h->set_near_limit(h->ratio() <= kNearLimitRatio);
  std::string verdict;
  if (h->ratio() < 1) {
    verdict =
        "faster than the measured floor (the measured ceilings are "
        "conservative): at the limit; further gains are small";
  } else if (h->near_limit()) {
    verdict =
        "within 1.5x of the floor: near the limit; further gains are "
        "small";
  } else {
    verdict = "room to improve";
  }
  h->set_note(absl::StrFormat("%s is %.1fx the %s: %s",
                              FormatDuration(measured), h->ratio(), floor_text,
                              verdict));
}

void FillRoofline(const v1::GpuSpec& gpu, v1::ProfileReport* p) {
  p->clear_roofline();
  double flops = 0, bytes = 0, time_us = 0;
  double sol_sum = 0, sol_weight = 0;
  bool any = false;
  // The point is a fact only when every launch's FLOPs and bytes are.
  bool point_known = true;
  for (const v1::LaunchProfile& l : p->launches()) {
    if (!l.has_counters()) continue;
    any = true;
    const std::optional<double> f = Fact(*p, l, "flops");
    const std::optional<double> rd = Fact(*p, l, "dram_read_bytes");
    const std::optional<double> wr = Fact(*p, l, "dram_write_bytes");
    point_known =
        point_known && f.has_value() && rd.has_value() && wr.has_value();
    flops += f.value_or(0);
    bytes += rd.value_or(0) + wr.value_or(0);
    const double t = LaunchTimeUs(l);
    time_us += t;
    const std::optional<double> sm = Fact(*p, l, "sm_throughput_pct");
    const std::optional<double> memory = Fact(*p, l, "memory_throughput_pct");
    if (sm.has_value() || memory.has_value()) {
      sol_sum += std::max(sm.value_or(0), memory.value_or(0)) * t;
      sol_weight += t;
    }
  }
  if (!any) return;
  v1::Roofline* r = p->mutable_roofline();
  r->set_counted_flops(flops);
  r->set_dram_bytes(bytes);
  r->set_intensity(bytes > 0 ? flops / bytes : 0);
  const double peak_gbps = gpu.measured_copy_gbps();
  const double peak_tflops = gpu.measured_fp32_tflops();
  if (peak_gbps > 0 && peak_tflops > 0) {
    r->set_ridge_intensity(peak_tflops * 1e12 / (peak_gbps * 1e9));
  }
  if (time_us > 0) {
    r->set_achieved_tflops(flops / (time_us * 1e-6) / 1e12);
    r->set_achieved_gbps(bytes / (time_us * 1e-6) / 1e9);
  }
  std::optional<double> sol;
  std::string sol_what = "SOL";
  if (sol_weight > 0) {
    sol = sol_sum / sol_weight;
  } else if (point_known && (peak_gbps > 0 || peak_tflops > 0)) {
    sol = std::max(
        peak_gbps > 0 ? 100 * r->achieved_gbps() / peak_gbps : 0,
        peak_tflops > 0 ? 100 * r->achieved_tflops() / peak_tflops : 0);
    sol_what = "the larger of achieved / measured bandwidth and FP32 rate";
  }
  const std::string point =
      absl::StrFormat("%s FLOP/B, %s TFLOP/s, %s GB/s", Rate(r->intensity()),
                      Rate(r->achieved_tflops()), Rate(r->achieved_gbps()));
  if (sol.has_value() && *sol < kLatencyBoundSolPct) {
    r->set_bound("latency");
    r->set_reason(absl::StrCat(
        sol_what, " is ", Pct(*sol), " (< ", Pct(kLatencyBoundSolPct),
        "): neither roof is approached, so latency (too little parallel "
        "work, dependent accesses, launch overhead) bounds it; ",
        point));
    return;
  }
  const std::string sol_text =
      sol.has_value() ? absl::StrCat(" and ", sol_what, " is ", Pct(*sol)) : "";
  if (r->ridge_intensity() > 0 && point_known && bytes > 0) {
    const bool memory = r->intensity() < r->ridge_intensity();
    r->set_bound(memory ? "memory" : "compute");
    r->set_reason(absl::StrFormat(
        "%s FLOP/B is %s the ridge %s FLOP/B%s: %s-bound at %s of the "
        "measured %s",
        Rate(r->intensity()), memory ? "below" : "at or above",
        Rate(r->ridge_intensity()), sol_text, r->bound(),
        memory ? absl::StrCat(Rate(r->achieved_gbps()), " GB/s")
               : absl::StrCat(Rate(r->achieved_tflops()), " TFLOP/s"),
        memory ? absl::StrCat(Rate(peak_gbps), " GB/s")
               : absl::StrCat(Rate(peak_tflops), " TFLOP/s")));
    return;
  }
  // No measured ceilings, or no trusted point: the larger SOL side decides.
  const std::optional<double> sm = WeightedFact(*p, "sm_throughput_pct");
  const std::optional<double> mem = WeightedFact(*p, "memory_throughput_pct");
  if (sm.has_value() && mem.has_value()) {
    r->set_bound(*mem >= *sm ? "memory" : "compute");
    r->set_reason(absl::StrCat(
        "SOL memory ", Pct(*mem), " vs compute ", Pct(*sm),
        point_known && bytes > 0
            ? " (the GPU's measured ceilings are unknown); "
            : " (FLOPs or DRAM bytes were not counted, or are suspect); ",
        point));
    return;
  }
  r->set_reason(absl::StrCat(
      "not classified: no SOL figures, and no measured ceilings or trusted "
      "FLOP and byte counts; ",
      point));
}

struct Noise {
  enum Kind { kRelative, kAbsolute, kExact };
  Kind kind;
  double amount;
};
constexpr Noise kTimeNoise = {Noise::kRelative, 0.03};
constexpr Noise kPctNoise = {Noise::kAbsolute, 1.0};
constexpr Noise kExactNoise = {Noise::kExact, 0};

struct PlanFigure {
  const char* name;
  const char* unit;
  bool higher_is_better;
  Noise noise;
  std::optional<double> (*get)(const v1::ProfileReport&);
};

std::optional<double> Positive(double v) {
  if (v > 0 && std::isfinite(v)) return v;
  return std::nullopt;
}

std::optional<double> KernelUs(const v1::ProfileReport& p) {
  if (p.timing().kernel().median_us() > 0) {
    return p.timing().kernel().median_us();
  }
  return Positive(p.total().median_us());
}

std::optional<double> DramBytes(const v1::ProfileReport& p) {
  const std::optional<double> rd = SummedFact(p, "dram_read_bytes");
  const std::optional<double> wr = SummedFact(p, "dram_write_bytes");
  if (!rd.has_value() || !wr.has_value()) return std::nullopt;
  return *rd + *wr;
}

std::optional<double> SectorsPerRequest(const v1::ProfileReport& p) {
  const std::optional<double> sectors = SummedFact(p, "global_load_sectors");
  const std::optional<double> requests = SummedFact(p, "global_load_requests");
  if (!sectors.has_value() || !requests.has_value() || *requests <= 0) {
    return std::nullopt;
  }
  return *sectors / *requests;
}

std::optional<double> MaxStatic(const v1::ProfileReport& p,
                                double (*get)(const v1::LaunchProfile&)) {
  if (p.launches().empty()) return std::nullopt;
  double m = 0;
  for (const v1::LaunchProfile& l : p.launches()) m = std::max(m, get(l));
  return m;
}

// clang-format off
const PlanFigure kPlanFigures[] = {
    {"kernel_median_us", "us", false, kTimeNoise, KernelUs},
    {"counted_gpu_time_us", "us", false, kTimeNoise,
     [](const v1::ProfileReport& p) { return SummedFact(p, "gpu_time_us"); }},
    {"speedup", "x", true, kTimeNoise,
     [](const v1::ProfileReport& p) { return Positive(p.timing().speedup()); }},
    {"dram_bytes", "B", false, kTimeNoise, DramBytes},
    {"l2_hit_rate_pct", "%", true, kPctNoise,
     [](const v1::ProfileReport& p) { return WeightedFact(p, "l2_hit_rate_pct"); }},
    {"achieved_occupancy_pct", "%", true, kPctNoise,
     [](const v1::ProfileReport& p) {
       return WeightedFact(p, "achieved_occupancy_pct");
     }},
    {"global_load_sectors_per_request", "sectors/request", false, kTimeNoise,
     SectorsPerRequest},
    {"eligible_warps_per_cycle", "warps/cycle", true, kTimeNoise,
     [](const v1::ProfileReport& p) {
       return WeightedFact(p, "eligible_warps_per_cycle");
     }},
    {"smem_bank_conflict_pct", "%", false, kPctNoise,
     [](const v1::ProfileReport& p) {
       return WeightedFact(p, "smem_bank_conflict_pct");
     }},
    {"sm_throughput_pct", "%", true, kPctNoise,
     [](const v1::ProfileReport& p) { return WeightedFact(p, "sm_throughput_pct"); }},
    {"memory_throughput_pct", "%", true, kPctNoise,
     [](const v1::ProfileReport& p) {
       return WeightedFact(p, "memory_throughput_pct");
     }},
    {"registers", "registers/thread", false, kExactNoise,
     [](const v1::ProfileReport& p) {
       return MaxStatic(p, [](const v1::LaunchProfile& l) {
         return static_cast<double>(l.registers());
       });
     }},
    {"local_bytes", "B/thread", false, kExactNoise,
     [](const v1::ProfileReport& p) {
       return MaxStatic(p, [](const v1::LaunchProfile& l) {
         return static_cast<double>(l.local_bytes());
       });
     }},
};
// clang-format on

bool Regressed(const PlanFigure& f, double previous, double current) {
  const double worse =
      f.higher_is_better ? previous - current : current - previous;
  switch (f.noise.kind) {
    case Noise::kRelative:
      return worse > f.noise.amount * std::fabs(previous);
    case Noise::kAbsolute:
      return worse > f.noise.amount;
    case Noise::kExact:
      return worse > 0;
  }
  return false;
}

}  // namespace

void AnalyzeProfile(const v1::GpuSpec& gpu, v1::ProfileReport* p) {
  FillHeadroom(gpu, p);
  FillRoofline(gpu, p);
  p->clear_hints();
  for (v1::ProfileHint& h : EvaluateHints(gpu, *p)) {
    *p->add_hints() = std::move(h);
  }
}

void ComputeDeltas(const v1::ProfileReport& previous,
                   const std::string& previous_job_id,
                   v1::ProfileReport* current) {
  current->clear_deltas();
  current->set_previous_job_id(previous_job_id);
  for (const PlanFigure& f : kPlanFigures) {
    const std::optional<double> before = f.get(previous);
    const std::optional<double> after = f.get(*current);
    if (!before.has_value() || !after.has_value()) continue;
    v1::MetricDelta* d = current->add_deltas();
    d->set_figure(f.name);
    d->set_unit(f.unit);
    d->set_previous(*before);
    d->set_current(*after);
    d->set_higher_is_better(f.higher_is_better);
    d->set_regressed(Regressed(f, *before, *after));
  }
}

}  // namespace kbench
