#include "analysis/profile_hints.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "analysis/counter_figures.h"

namespace kbench {
namespace {

// Launches under this share of a multi-launch plan's time get no hints.
constexpr double kMinShareForHintsPct = 5.0;

// clang-format off
const HintRule kRules[] = {
    {"near_limit", HintRule::kPlan, "headroom_ratio", HintOp::kLessEq, 1.5,
     "x the floor", nullptr, HintOp::kGreater, 0,
     "the kernel is within 1.5x of the physical floor for this shape: it is "
     "near the limit; stop optimizing this kernel (further gains are small)"},
    {"uncoalesced_loads", HintRule::kLaunch,
     "global_load_sectors_per_request", HintOp::kGreater, 8,
     "sectors/request", "global_load_requests", HintOp::kGreater, 0,
     "{entry}: global loads use {value} sectors per request where 4 is ideal "
     "for 4-byte words: consecutive threads should read consecutive "
     "addresses (index with threadIdx.x in the fastest-moving dimension, or "
     "stage a transpose through shared memory)"},
    {"uncoalesced_stores", HintRule::kLaunch,
     "global_store_sectors_per_request", HintOp::kGreater, 8,
     "sectors/request", "global_store_requests", HintOp::kGreater, 0,
     "{entry}: global stores use {value} sectors per request where 4 is "
     "ideal for 4-byte words: consecutive threads should write consecutive "
     "addresses (stage the output tile in shared memory, then write rows)"},
    {"low_theoretical_occupancy", HintRule::kLaunch,
     "theoretical_occupancy_pct", HintOp::kLess, 25, "%", nullptr,
     HintOp::kGreater, 0,
     "{entry}: at most {value}% of the warp slots can be occupied; the "
     "limiter is {limiter}: use fewer registers (__launch_bounds__), less "
     "shared memory per block, or a different block size"},
    {"low_achieved_occupancy", HintRule::kLaunch, "achieved_occupancy_pct",
     HintOp::kLess, 25, "%", "theoretical_occupancy_pct", HintOp::kGreaterEq,
     50,
     "{entry}: only {value}% of the warp slots are occupied on average "
     "although 50% or more could be: blocks finish unevenly or the grid is "
     "too small; give each SM more (and evenly sized) blocks"},
    {"low_eligible_warps", HintRule::kLaunch, "eligible_warps_per_cycle",
     HintOp::kLess, 1, "warps/cycle per scheduler", nullptr, HintOp::kGreater,
     0,
     "{entry}: {value} eligible warps per cycle per scheduler: latency-bound, "
     "not enough ready warps to hide latency; raise occupancy or the "
     "independent work per thread (ILP: several loads in flight)"},
    {"smem_bank_conflicts", HintRule::kLaunch, "smem_bank_conflict_pct",
     HintOp::kGreater, 10, "% of wavefronts", nullptr, HintOp::kGreater, 0,
     "{entry}: {value}% of shared-memory wavefronts are bank conflicts: pad "
     "shared arrays (e.g. [32][33]) or swizzle the index so a warp touches "
     "32 different banks"},
    {"register_spills", HintRule::kLaunch, "local_bytes", HintOp::kGreater, 0,
     "B/thread", nullptr, HintOp::kGreater, 0,
     "{entry}: {value} B of local memory per thread (register spills or a "
     "dynamically indexed array): fewer live values, unrolled constant "
     "indices, or a looser __launch_bounds__"},
    {"tail_effect", HintRule::kLaunch, "last_wave_fill_pct", HintOp::kLess, 50,
     "% of a wave", nullptr, HintOp::kGreater, 0,
     "{entry}: {waves} waves of {blocks_per_wave} blocks: the last wave "
     "fills only {value}% of the GPU, so part of the time most SMs idle; "
     "size the grid to a multiple of {blocks_per_wave} blocks or make "
     "blocks smaller"},
    {"tiny_grid", HintRule::kLaunch, "sm_fill_pct", HintOp::kLess, 100,
     "% of SMs", nullptr, HintOp::kGreater, 0,
     "{entry}: {blocks} blocks: only {sms_busy} of {sm_count} SMs busy; "
     "split the work into at least {sm_count} blocks (smaller tiles, "
     "split-K, more blocks per row)"},
    {"dram_bound", HintRule::kLaunch, "dram_pct_of_peak", HintOp::kGreater, 60,
     "% of peak", nullptr, HintOp::kGreater, 0,
     "{entry}: DRAM at {value}% of peak: memory-bound; reduce bytes: reuse "
     "data through shared memory and registers, read each input once, use "
     "wider (vectorized) accesses and narrower types where allowed"},
    {"long_scoreboard", HintRule::kLaunch, "stall_long_scoreboard_pct",
     HintOp::kGreater, 40, "% of stalls", nullptr, HintOp::kGreater, 0,
     "{entry}: {value}% of warp stalls wait on global memory (long "
     "scoreboard): prefetch earlier, issue several independent loads per "
     "thread (more ILP), or stage tiles in shared memory with cp.async"},
    {"fma_bound", HintRule::kLaunch, "fma_pipe_pct", HintOp::kGreater, 60,
     "% of peak", nullptr, HintOp::kGreater, 0,
     "{entry}: the FMA pipe is {value}% busy: compute-bound on FP32; use "
     "tensor cores (mma / wmma with TF32 or BF16) or remove redundant "
     "FLOPs"},
    {"issue_bound", HintRule::kLaunch, "issue_slot_pct", HintOp::kGreater, 80,
     "% of issue slots", nullptr, HintOp::kGreater, 0,
     "{entry}: instruction issue is {value}% busy: cut instructions per "
     "useful FLOP or byte (hoist index math, vectorize loads, unroll)"},
};
// clang-format on

bool Passes(double v, HintOp op, double t) {
  switch (op) {
    case HintOp::kGreater:
      return v > t;
    case HintOp::kGreaterEq:
      return v >= t;
    case HintOp::kLess:
      return v < t;
    case HintOp::kLessEq:
      return v <= t;
  }
  return false;
}

int64_t Product(const google::protobuf::RepeatedField<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= std::max<int64_t>(d, 1);
  return dims.empty() ? 0 : n;
}

int BlocksPerWave(const v1::GpuSpec& gpu, const v1::LaunchProfile& l) {
  return std::max(l.blocks_per_sm(), 1) * gpu.sm_count();
}

// Static and derived figures; nullopt for names that are not.
std::optional<double> StaticFigure(const v1::GpuSpec& gpu,
                                   const v1::LaunchProfile& l,
                                   const std::string& name) {
  if (name == "local_bytes") return static_cast<double>(l.local_bytes());
  if (name == "registers") return l.registers();
  if (name == "theoretical_occupancy_pct") {
    if (l.theoretical_occupancy_pct() <= 0) return std::nullopt;
    return l.theoretical_occupancy_pct();
  }
  if (name == "waves") return l.waves();
  if (name == "blocks") return static_cast<double>(Product(l.grid()));
  if (name == "last_wave_fill_pct") {
    if (l.waves() <= 1 || l.waves() >= 3) return std::nullopt;
    const double frac = l.waves() - std::floor(l.waves());
    if (frac < 1e-9) return std::nullopt;
    return 100 * frac;
  }
  if (name == "sm_fill_pct") {
    const int64_t blocks = Product(l.grid());
    if (gpu.sm_count() <= 0 || blocks <= 0) return std::nullopt;
    return 100.0 * std::min<int64_t>(blocks, gpu.sm_count()) / gpu.sm_count();
  }
  return std::nullopt;
}

bool IsStatic(const std::string& name) {
  return name == "local_bytes" || name == "registers" ||
         name == "theoretical_occupancy_pct" || name == "waves" ||
         name == "blocks" || name == "last_wave_fill_pct" ||
         name == "sm_fill_pct";
}

// A usable figure: known, not missing, not suspect.
std::optional<double> Figure(const v1::GpuSpec& gpu, const v1::ProfileReport& p,
                             const v1::LaunchProfile* l,
                             const std::string& name) {
  if (l == nullptr) {
    if (name == "headroom_ratio" && p.has_headroom() &&
        p.headroom().ratio() > 0) {
      return p.headroom().ratio();
    }
    return std::nullopt;
  }
  if (SuspectReason(*l, name).has_value()) return std::nullopt;
  if (IsStatic(name)) return StaticFigure(gpu, *l, name);
  return CounterFigure(p, *l, name);
}

std::string Num(double v) {
  if (std::fabs(v - std::round(v)) < 1e-9 && std::fabs(v) < 1e12) {
    return absl::StrFormat("%.0f", v);
  }
  return absl::StrFormat("%.3g", v);
}

void Fire(const HintRule& rule, const v1::GpuSpec& gpu,
          const v1::LaunchProfile* l, double value,
          std::vector<v1::ProfileHint>* out) {
  v1::ProfileHint h;
  h.set_rule(rule.id);
  h.set_metric(rule.figure);
  h.set_value(value);
  h.set_threshold(ThresholdText(rule.op, rule.threshold, rule.unit));
  std::vector<std::pair<std::string, std::string>> vars = {
      {"{value}", Num(value)}, {"{threshold}", h.threshold()}};
  if (l != nullptr) {
    h.set_entry(l->entry());
    const int64_t blocks = Product(l->grid());
    vars.push_back({"{entry}", l->entry()});
    vars.push_back({"{blocks}", absl::StrCat(blocks)});
    vars.push_back({"{sm_count}", absl::StrCat(gpu.sm_count())});
    vars.push_back({"{sms_busy}", absl::StrCat(std::min<int64_t>(
                                      blocks, std::max(gpu.sm_count(), 0)))});
    vars.push_back({"{waves}", absl::StrFormat("%.2f", l->waves())});
    vars.push_back({"{blocks_per_wave}", absl::StrCat(BlocksPerWave(gpu, *l))});
    std::string limiter = OccupancyLimiter(gpu, *l);
    if (limiter.empty()) limiter = "unknown (the GPU's limits were not given)";
    vars.push_back({"{limiter}", limiter});
  }
  h.set_message(absl::StrReplaceAll(rule.message, vars));
  out->push_back(std::move(h));
}

}  // namespace

absl::Span<const HintRule> HintRules() { return kRules; }

std::string ThresholdText(HintOp op, double threshold,
                          const std::string& unit) {
  const char* sym = op == HintOp::kGreater     ? ">"
                    : op == HintOp::kGreaterEq ? ">="
                    : op == HintOp::kLess      ? "<"
                                               : "<=";
  const bool glued = !unit.empty() && unit[0] == '%';
  return absl::StrCat(sym, " ", Num(threshold), glued ? "" : " ", unit);
}

std::string OccupancyLimiter(const v1::GpuSpec& gpu,
                             const v1::LaunchProfile& l) {
  const int64_t threads = Product(l.block());
  if (threads <= 0 || gpu.max_threads_per_sm() <= 0) return "";
  const int warp = gpu.warp_size() > 0 ? gpu.warp_size() : 32;
  const int64_t warps = (threads + warp - 1) / warp;
  struct Limit {
    int64_t blocks;
    std::string what;
  };
  std::vector<Limit> limits;
  limits.push_back({gpu.max_threads_per_sm() / threads,
                    absl::StrCat("the block size (", threads, " threads)")});
  if (gpu.max_blocks_per_sm() > 0) {
    limits.push_back(
        {gpu.max_blocks_per_sm(), absl::StrCat("the ", gpu.max_blocks_per_sm(),
                                               " blocks/SM hardware limit")});
  }
  if (l.registers() > 0 && gpu.regs_per_sm() > 0) {
    // Registers are allocated per warp in units of 256.
    const int64_t per_warp = (l.registers() * warp + 255) / 256 * 256;
    limits.push_back(
        {gpu.regs_per_sm() / (per_warp * warps),
         absl::StrCat("registers (", l.registers(), " per thread)")});
  }
  const int64_t smem =
      l.static_smem_bytes() + l.dynamic_smem_bytes() + l.reserved_smem_bytes();
  if (smem > 0 && gpu.smem_per_sm_bytes() > 0) {
    limits.push_back({gpu.smem_per_sm_bytes() / smem,
                      absl::StrCat("shared memory (", smem, " B per block)")});
  }
  const Limit* best = &limits[0];
  for (const Limit& lim : limits) {
    if (lim.blocks < best->blocks) best = &lim;
  }
  return absl::StrCat(best->what, ", allowing ", best->blocks, " blocks/SM");
}

std::vector<v1::ProfileHint> EvaluateHints(const v1::GpuSpec& gpu,
                                           const v1::ProfileReport& p) {
  std::vector<v1::ProfileHint> out;
  for (const HintRule& rule : kRules) {
    std::vector<const v1::LaunchProfile*> targets;
    if (rule.scope == HintRule::kPlan) {
      targets.push_back(nullptr);
    } else {
      for (const v1::LaunchProfile& l : p.launches()) {
        if (p.launches_size() > 1 && l.share_pct() > 0 &&
            l.share_pct() < kMinShareForHintsPct) {
          continue;
        }
        targets.push_back(&l);
      }
    }
    for (const v1::LaunchProfile* l : targets) {
      const std::optional<double> v = Figure(gpu, p, l, rule.figure);
      if (!v.has_value() || !Passes(*v, rule.op, rule.threshold)) continue;
      if (rule.guard_figure != nullptr) {
        const std::optional<double> g = Figure(gpu, p, l, rule.guard_figure);
        if (!g.has_value() || !Passes(*g, rule.guard_op, rule.guard_threshold))
          continue;
      }
      Fire(rule, gpu, l, *v, &out);
    }
  }
  return out;
}

}  // namespace kbench
