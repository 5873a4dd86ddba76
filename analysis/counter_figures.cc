#include "analysis/counter_figures.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "google/protobuf/descriptor.h"

namespace kbench {
namespace {

constexpr char kTime[] = "gpu__time_duration.sum";
constexpr char kDramRead[] = "dram__bytes_read.sum";
constexpr char kDramWrite[] = "dram__bytes_write.sum";
constexpr char kDramPct[] =
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed";
constexpr char kL2Hit[] = "lts__t_sector_hit_rate.pct";
constexpr char kL1Hit[] = "l1tex__t_sector_hit_rate.pct";
constexpr char kOccupancy[] =
    "sm__warps_active.avg.pct_of_peak_sustained_active";
constexpr char kLdSectors[] = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
constexpr char kLdRequests[] =
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
constexpr char kStSectors[] = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
constexpr char kStRequests[] =
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";
constexpr char kFma[] =
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active";
constexpr char kTensor[] =
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active";
constexpr char kEligible[] = "smsp__warps_eligible.avg.per_cycle_active";
constexpr char kActive[] = "smsp__warps_active.avg.per_cycle_active";
constexpr char kIssue[] = "smsp__issue_active.avg.pct_of_peak_sustained_active";
constexpr char kConflictLd[] =
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
constexpr char kConflictSt[] =
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";
constexpr char kWavefrontLd[] =
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
constexpr char kWavefrontSt[] =
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
constexpr char kSmSol[] = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
constexpr char kMemSol[] =
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
constexpr char kSmCycles[] = "sm__cycles_active.avg";
constexpr char kGpcCycles[] = "gpc__cycles_elapsed.max";

// FLOP counters, as ncu's roofline counts them: FMA counts twice.
struct FlopCounter {
  const char* metric;
  double flops_per_inst;
};
constexpr FlopCounter kFlopCounters[] = {
    {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 2},
    {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 1},
    {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 1},
    {"smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", 2},
    {"smsp__sass_thread_inst_executed_op_hadd_pred_on.sum", 1},
    {"smsp__sass_thread_inst_executed_op_hmul_pred_on.sum", 1},
    {"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", 2},
    {"smsp__sass_thread_inst_executed_op_dadd_pred_on.sum", 1},
    {"smsp__sass_thread_inst_executed_op_dmul_pred_on.sum", 1},
};

std::string StallMetric(const std::string& reason) {
  return absl::StrCat("smsp__warp_issue_stalled_", reason,
                      "_per_warp_active.pct");
}

// A figure of CounterProfile and the metrics it needs.
struct FigureDef {
  const char* figure;
  std::vector<std::string> metrics;
};

const std::vector<FigureDef>& Figures() {
  static const auto* figures = new std::vector<FigureDef>{
      {"gpu_time_us", {kTime}},
      {"dram_read_bytes", {kDramRead}},
      {"dram_write_bytes", {kDramWrite}},
      {"dram_pct_of_peak", {kDramPct}},
      {"l2_hit_rate_pct", {kL2Hit}},
      {"achieved_occupancy_pct", {kOccupancy}},
      {"global_load_sectors_per_request", {kLdSectors, kLdRequests}},
      {"global_store_sectors_per_request", {kStSectors, kStRequests}},
      {"l1_hit_rate_pct", {kL1Hit}},
      {"fma_pipe_pct", {kFma}},
      {"tensor_pipe_pct", {kTensor}},
      {"eligible_warps_per_cycle", {kEligible}},
      {"active_warps_per_cycle", {kActive}},
      {"issue_slot_pct", {kIssue}},
      {"smem_bank_conflict_pct",
       {kConflictLd, kConflictSt, kWavefrontLd, kWavefrontSt}},
      {"sm_throughput_pct", {kSmSol}},
      {"memory_throughput_pct", {kMemSol}},
      {"flops",
       {kFlopCounters[0].metric, kFlopCounters[1].metric,
        kFlopCounters[2].metric}},
      {"sm_cycles_active", {kSmCycles}},
      {"gpc_cycles_elapsed", {kGpcCycles}},
      {"top_stalls", {StallMetric("long_scoreboard")}},
  };
  return *figures;
}

double Get(const std::map<std::string, double>& v, const char* name) {
  auto it = v.find(name);
  return it == v.end() ? 0 : it->second;
}

double Ratio(double num, double den) { return den > 0 ? num / den : 0; }

// Below this many L2 sector lookups (3.2 MB) the L2 hit rate is not stable
// from run to run (see DeriveCounterFigures).
constexpr double kMinL2SectorsForHitRate = 100000;

// Labels `value` of `figure` as suspect when outside [lo, hi].
void CheckRange(const char* figure, double value, double lo, double hi,
                const char* unit, const char* why, v1::CounterProfile* c) {
  if (value >= lo && value <= hi) return;
  c->add_suspect(absl::StrFormat("%s %.4g%s outside [%g, %g]%s: %s", figure,
                                 value, unit, lo, hi, unit, why));
}

}  // namespace

absl::StatusOr<ProfilePreset> ParseProfilePreset(absl::string_view name) {
  if (name.empty() || name == "full") return ProfilePreset::kFull;
  if (name == "fast") return ProfilePreset::kFast;
  return absl::InvalidArgumentError(absl::StrCat(
      "profile_preset must be \"fast\" (time, DRAM, L2, occupancy, "
      "coalescing; few replay passes) or \"full\" (every figure and the "
      "warp stalls), not \"",
      name, "\""));
}

const char* ProfilePresetName(ProfilePreset preset) {
  return preset == ProfilePreset::kFast ? "fast" : "full";
}

const std::vector<std::string>& StallReasons() {
  static const auto* reasons =
      new std::vector<std::string>{"barrier",
                                   "branch_resolving",
                                   "dispatch_stall",
                                   "drain",
                                   "imc_miss",
                                   "lg_throttle",
                                   "long_scoreboard",
                                   "math_pipe_throttle",
                                   "membar",
                                   "mio_throttle",
                                   "misc",
                                   "no_instruction",
                                   "not_selected",
                                   "selected",
                                   "short_scoreboard",
                                   "sleeping",
                                   "tex_throttle",
                                   "wait",
                                   "gmma"};
  return *reasons;
}

const std::vector<std::string>& PresetMetrics(ProfilePreset preset) {
  static const auto* fast = new std::vector<std::string>{
      kTime,      kDramRead,  kDramWrite,  kDramPct,   kL2Hit,
      kOccupancy, kLdSectors, kLdRequests, kStSectors, kStRequests};
  static const auto* full = [] {
    auto* m = new std::vector<std::string>(*fast);
    for (const char* name :
         {kL1Hit, kFma, kTensor, kEligible, kActive, kIssue, kConflictLd,
          kConflictSt, kWavefrontLd, kWavefrontSt, kSmSol, kMemSol, kSmCycles,
          kGpcCycles}) {
      m->push_back(name);
    }
    for (const FlopCounter& f : kFlopCounters) m->push_back(f.metric);
    for (const std::string& r : StallReasons()) m->push_back(StallMetric(r));
    return m;
  }();
  return preset == ProfilePreset::kFast ? *fast : *full;
}

void DeriveCounterFigures(const std::map<std::string, double>& v,
                          const v1::GpuSpec& spec, v1::LaunchProfile* launch) {
  v1::CounterProfile* c = launch->mutable_counters();
  for (const auto& [name, value] : v) (*c->mutable_metrics())[name] = value;
  const double ns = Get(v, kTime);
  c->set_gpu_time_us(ns / 1000);
  c->set_dram_read_bytes(Get(v, kDramRead));
  c->set_dram_write_bytes(Get(v, kDramWrite));
  // Bytes per ns are GB/s.
  c->set_dram_read_gbps(Ratio(c->dram_read_bytes(), ns));
  c->set_dram_write_gbps(Ratio(c->dram_write_bytes(), ns));
  c->set_dram_pct_of_peak(Get(v, kDramPct));
  c->set_l1_hit_rate_pct(Get(v, kL1Hit));
  c->set_l2_hit_rate_pct(Get(v, kL2Hit));
  c->set_fma_pipe_pct(Get(v, kFma));
  c->set_tensor_pipe_pct(Get(v, kTensor));
  c->set_achieved_occupancy_pct(Get(v, kOccupancy));
  c->set_eligible_warps_per_cycle(Get(v, kEligible));
  c->set_active_warps_per_cycle(Get(v, kActive));
  c->set_issue_slot_pct(Get(v, kIssue));
  c->set_global_load_requests(Get(v, kLdRequests));
  c->set_global_load_sectors(Get(v, kLdSectors));
  c->set_global_load_sectors_per_request(
      Ratio(c->global_load_sectors(), c->global_load_requests()));
  c->set_global_store_requests(Get(v, kStRequests));
  c->set_global_store_sectors(Get(v, kStSectors));
  c->set_global_store_sectors_per_request(
      Ratio(c->global_store_sectors(), c->global_store_requests()));
  c->set_smem_bank_conflicts(Get(v, kConflictLd) + Get(v, kConflictSt));
  c->set_smem_bank_conflict_pct(
      100 * Ratio(c->smem_bank_conflicts(),
                  Get(v, kWavefrontLd) + Get(v, kWavefrontSt)));
  c->set_sm_throughput_pct(Get(v, kSmSol));
  c->set_memory_throughput_pct(Get(v, kMemSol));
  double flops = 0;
  for (const FlopCounter& f : kFlopCounters) {
    flops += f.flops_per_inst * Get(v, f.metric);
  }
  c->set_flops(flops);
  c->set_sm_cycles_active(Get(v, kSmCycles));
  c->set_gpc_cycles_elapsed(Get(v, kGpcCycles));

  // Physical ranges. Hit rates above 100% do occur on tiny kernels.
  const char* kTiny =
      "the hardware counters over-count on kernels this small; it is not a "
      "physical rate";
  const char* kPct = "a percentage of peak cannot leave this range";
  if (v.count(kL2Hit)) {
    // The L2's sector lookups, about: the L1's global misses and stores.
    const double l2_sectors =
        Get(v, kLdSectors) * (1 - Get(v, kL1Hit) / 100) + Get(v, kStSectors);
    if (v.count(kL1Hit) && v.count(kLdSectors) &&
        l2_sectors < kMinL2SectorsForHitRate) {
      c->add_suspect(absl::StrFormat(
          "l2_hit_rate_pct %.4g%%: only about %.0f L2 sector lookups, too "
          "few for a stable rate (on the H200, ncu reads 65%% to 88%% from "
          "run to run for a 12 us launch of the naive kernel, and this "
          "profile up to 139%%)",
          c->l2_hit_rate_pct(), l2_sectors));
    } else {
      CheckRange("l2_hit_rate_pct", c->l2_hit_rate_pct(), 0, 100, "%", kTiny,
                 c);
    }
  }
  if (v.count(kL1Hit)) {
    CheckRange("l1_hit_rate_pct", c->l1_hit_rate_pct(), 0, 100, "%", kTiny, c);
  }
  struct PctFigure {
    const char* name;
    const char* metric;
    double value;
  };
  for (const PctFigure& p : {
           PctFigure{"dram_pct_of_peak", kDramPct, c->dram_pct_of_peak()},
           PctFigure{"fma_pipe_pct", kFma, c->fma_pipe_pct()},
           PctFigure{"tensor_pipe_pct", kTensor, c->tensor_pipe_pct()},
           PctFigure{"achieved_occupancy_pct", kOccupancy,
                     c->achieved_occupancy_pct()},
           PctFigure{"issue_slot_pct", kIssue, c->issue_slot_pct()},
           PctFigure{"sm_throughput_pct", kSmSol, c->sm_throughput_pct()},
           PctFigure{"memory_throughput_pct", kMemSol,
                     c->memory_throughput_pct()},
       }) {
    if (v.count(p.metric)) CheckRange(p.name, p.value, 0, 100.5, "%", kPct, c);
  }
  if (c->global_load_requests() > 0) {
    // A warp request touches 1 to 32 sectors (more only for 16-byte
    // accesses: 32 threads x 16 B = 16 sectors... 64 with misalignment).
    CheckRange("global_load_sectors_per_request",
               c->global_load_sectors_per_request(), 1, 64, "", kTiny, c);
  }
  if (v.count(kEligible) && v.count(kActive) &&
      c->eligible_warps_per_cycle() > c->active_warps_per_cycle() + 1e-6) {
    c->add_suspect(absl::StrFormat(
        "eligible_warps_per_cycle %.3g exceeds active_warps_per_cycle %.3g: "
        "eligible warps are a subset of active ones",
        c->eligible_warps_per_cycle(), c->active_warps_per_cycle()));
  }
  const double peak_gbps = spec.theoretical_memory_gbps();
  if (peak_gbps > 0 && ns > 0 &&
      c->dram_read_gbps() + c->dram_write_gbps() > 1.1 * peak_gbps) {
    c->add_suspect(absl::StrFormat(
        "dram_read_gbps %.4g (with writes) exceeds 1.1 x the GPU's "
        "theoretical %.4g GB/s: the kernel is too short for a rate",
        c->dram_read_gbps() + c->dram_write_gbps(), peak_gbps));
  }

  // Warp stalls: shares of the summed per-warp stall percentages.
  std::vector<std::pair<double, std::string>> stalls;
  double total = 0;
  for (const std::string& r : StallReasons()) {
    auto it = v.find(StallMetric(r));
    if (it == v.end() || r == "selected" || it->second <= 0) continue;
    stalls.emplace_back(it->second, r);
    total += it->second;
  }
  std::sort(stalls.rbegin(), stalls.rend());
  launch->clear_top_stalls();
  for (size_t i = 0; i < stalls.size() && i < 5; ++i) {
    v1::StallReason* s = launch->add_top_stalls();
    s->set_reason(stalls[i].second);
    s->set_share_pct(100 * stalls[i].first / total);
  }
}

std::vector<v1::MissingFigure> MissingFigures(
    ProfilePreset preset, const std::set<std::string>& dropped,
    const std::string& dropped_reason) {
  const std::vector<std::string>& collected = PresetMetrics(preset);
  std::vector<v1::MissingFigure> out;
  for (const FigureDef& f : Figures()) {
    std::vector<std::string> absent, refused;
    for (const std::string& m : f.metrics) {
      if (std::find(collected.begin(), collected.end(), m) == collected.end()) {
        absent.push_back(m);
      } else if (dropped.count(m)) {
        refused.push_back(m);
      }
    }
    if (absent.empty() && refused.empty()) continue;
    v1::MissingFigure mf;
    mf.set_figure(f.figure);
    if (!absent.empty()) {
      mf.set_reason(absl::StrCat("not in the ", ProfilePresetName(preset),
                                 " preset (use profile_preset \"full\")"));
    } else {
      mf.set_reason(
          absl::StrCat(absl::StrJoin(refused, ", "), ": ", dropped_reason));
    }
    out.push_back(std::move(mf));
  }
  return out;
}

std::optional<double> CounterFigure(const v1::ProfileReport& p,
                                    const v1::LaunchProfile& launch,
                                    absl::string_view figure) {
  if (IsMissingFigure(p, figure)) return std::nullopt;
  if (absl::StartsWith(figure, "stall_") && absl::EndsWith(figure, "_pct")) {
    absl::string_view reason = figure;
    absl::ConsumePrefix(&reason, "stall_");
    absl::ConsumeSuffix(&reason, "_pct");
    for (const v1::StallReason& s : launch.top_stalls()) {
      if (s.reason() == reason) return s.share_pct();
    }
    return std::nullopt;
  }
  if (!launch.has_counters()) return std::nullopt;
  const v1::CounterProfile& c = launch.counters();
  const google::protobuf::FieldDescriptor* field =
      v1::CounterProfile::descriptor()->FindFieldByName(std::string(figure));
  if (field != nullptr && !field->is_repeated() &&
      field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE) {
    return c.GetReflection()->GetDouble(c, field);
  }
  auto it = c.metrics().find(std::string(figure));
  if (it != c.metrics().end()) return it->second;
  return std::nullopt;
}

std::optional<std::string> SuspectReason(const v1::LaunchProfile& launch,
                                         absl::string_view figure) {
  for (const std::string& s : launch.counters().suspect()) {
    absl::string_view rest = s;
    if (!absl::ConsumePrefix(&rest, figure)) continue;
    if (!rest.empty() && rest[0] != ' ' && rest[0] != ':') continue;
    while (!rest.empty() && (rest[0] == ' ' || rest[0] == ':')) {
      rest.remove_prefix(1);
    }
    if (rest.empty()) return std::string("outside its physical range");
    return std::string(rest);
  }
  return std::nullopt;
}

bool IsMissingFigure(const v1::ProfileReport& p, absl::string_view figure) {
  for (const v1::MissingFigure& m : p.missing()) {
    if (m.figure() == figure) return true;
  }
  return false;
}

}  // namespace kbench
