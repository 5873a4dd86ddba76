#include "report/profile_text.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/profile_analysis.h"
#include "report/report_text.h"
#include "report/report_text_internal.h"

namespace kbench {
namespace {

constexpr int kMaxReferenceKernels = 6;

// The CounterProfile figures AppendLaunchCounters shows.
constexpr const char* kShownFigures[] = {
    "gpu_time_us",
    "sm_throughput_pct",
    "memory_throughput_pct",
    "dram_read_bytes",
    "dram_read_gbps",
    "dram_write_bytes",
    "dram_write_gbps",
    "dram_pct_of_peak",
    "l1_hit_rate_pct",
    "l2_hit_rate_pct",
    "fma_pipe_pct",
    "tensor_pipe_pct",
    "issue_slot_pct",
    "flops",
    "achieved_occupancy_pct",
    "eligible_warps_per_cycle",
    "active_warps_per_cycle",
    "global_load_sectors_per_request",
    "global_load_requests",
    "global_load_sectors",
    "global_store_sectors_per_request",
    "global_store_requests",
    "global_store_sectors",
    "smem_bank_conflicts",
    "smem_bank_conflict_pct",
};

// Renders figures of one launch: "n/a" when missing, the value with
// "(suspect: why)" when suspect.
class FigureText {
 public:
  FigureText(const v1::ProfileReport& p, const v1::LaunchProfile& l)
      : p_(p), l_(l) {}

  // `format` takes the value (a printf format with one double).
  std::string operator()(absl::string_view figure,
                         const absl::FormatSpec<double>& format) const {
    return Render(figure, [&](double v) { return absl::StrFormat(format, v); });
  }

  template <typename Fn>
  std::string Render(absl::string_view figure, Fn fn) const {
    const std::optional<double> v = CounterFigure(p_, l_, figure);
    if (!v.has_value()) return "n/a";
    std::string text = fn(*v);
    if (std::optional<std::string> why = SuspectReason(l_, figure)) {
      absl::StrAppend(&text, " (suspect: ", *why, ")");
    }
    return text;
  }

 private:
  const v1::ProfileReport& p_;
  const v1::LaunchProfile& l_;
};

std::string Bytes(double b) {
  return FormatBytes(static_cast<int64_t>(std::llround(b)));
}

std::string Duration(double us) { return FormatDuration(us); }

void AppendStalls(const v1::LaunchProfile& l, absl::string_view indent,
                  std::string* out) {
  if (l.top_stalls().empty()) return;
  std::vector<std::string> parts;
  for (const v1::StallReason& s : l.top_stalls()) {
    parts.push_back(absl::StrFormat("%s %.1f%%", s.reason(), s.share_pct()));
  }
  absl::StrAppend(out, indent, "top stalls (of sampled warp stalls): ",
                  absl::StrJoin(parts, ", "), "\n");
}

void AppendMissing(const v1::ProfileReport& p, absl::string_view indent,
                   std::string* out) {
  // Grouped by reason, in order of first appearance.
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (const v1::MissingFigure& m : p.missing()) {
    auto it = groups.begin();
    while (it != groups.end() && it->first != m.reason()) ++it;
    if (it == groups.end()) {
      groups.push_back({m.reason(), {}});
      it = groups.end() - 1;
    }
    it->second.push_back(m.figure());
  }
  for (const auto& [reason, figures] : groups) {
    absl::StrAppend(out, indent, "missing: ", absl::StrJoin(figures, ", "));
    if (!reason.empty()) absl::StrAppend(out, " (", reason, ")");
    absl::StrAppend(out, "\n");
  }
}

std::string HintValue(double v) {
  if (std::fabs(v - std::round(v)) < 1e-9 && std::fabs(v) < 1e15) {
    return absl::StrFormat("%.0f", v);
  }
  return absl::StrFormat("%.3g", v);
}

}  // namespace

std::string FormatDeltaValues(const v1::MetricDelta& d) {
  auto one = [&](double v) -> std::string {
    if (d.unit() == "us") return FormatDuration(v);
    if (d.unit() == "B") return Bytes(v);
    if (d.unit() == "%") return absl::StrFormat("%.1f%%", v);
    if (d.unit() == "x") return absl::StrFormat("%.2fx", v);
    return absl::StrCat(HintValue(v), " ", d.unit());
  };
  return absl::StrCat(one(d.previous()), " -> ", one(d.current()));
}

void AppendLaunchCounters(const v1::ProfileReport& p,
                          const v1::LaunchProfile& l, absl::string_view indent,
                          std::string* out) {
  if (!l.has_counters()) {
    AppendStalls(l, indent, out);
    return;
  }
  const v1::CounterProfile& c = l.counters();
  const FigureText f(p, l);
  const auto bytes = [](double v) { return Bytes(v); };
  const auto duration = [](double v) { return Duration(v); };
  absl::StrAppend(out, indent, "counters: GPU time ",
                  f.Render("gpu_time_us", duration), "; SOL compute ",
                  f("sm_throughput_pct", "%.1f%%"), ", memory ",
                  f("memory_throughput_pct", "%.1f%%"), "\n");
  absl::StrAppend(
      out, indent, "DRAM: read ", f.Render("dram_read_bytes", bytes), " (",
      f("dram_read_gbps", "%.1f GB/s"), "), write ",
      f.Render("dram_write_bytes", bytes), " (",
      f("dram_write_gbps", "%.1f GB/s"), "); ", f("dram_pct_of_peak", "%.1f%%"),
      " of peak DRAM throughput\n");
  absl::StrAppend(out, indent, "cache hit rate: L1 ",
                  f("l1_hit_rate_pct", "%.1f%%"), ", L2 ",
                  f("l2_hit_rate_pct", "%.1f%%"), "\n");
  absl::StrAppend(out, indent, "pipes (of peak): FMA ",
                  f("fma_pipe_pct", "%.1f%%"), ", tensor ",
                  f("tensor_pipe_pct", "%.1f%%"), "; issue slots ",
                  f("issue_slot_pct", "%.1f%%"), " busy; ", f("flops", "%.4g"),
                  " FLOP counted\n");
  absl::StrAppend(
      out, indent, "occupancy: achieved ",
      f("achieved_occupancy_pct", "%.1f%%"),
      absl::StrFormat(" of %.1f%% theoretical; warps/cycle per scheduler: ",
                      l.theoretical_occupancy_pct()),
      f("eligible_warps_per_cycle", "%.2f"), " eligible, ",
      f("active_warps_per_cycle", "%.2f"), " active\n");
  absl::StrAppend(
      out, indent,
      "global loads: ", f("global_load_sectors_per_request", "%.2f"),
      " sectors/request (", f("global_load_requests", "%.0f"), " requests, ",
      f("global_load_sectors", "%.0f"),
      " sectors); stores: ", f("global_store_sectors_per_request", "%.2f"),
      " sectors/request (", f("global_store_requests", "%.0f"), " requests, ",
      f("global_store_sectors", "%.0f"),
      " sectors); ideal: 4 sectors/request for 4-byte words\n");
  absl::StrAppend(out, indent,
                  "shared memory: ", f("smem_bank_conflicts", "%.0f"),
                  " bank conflicts (", f("smem_bank_conflict_pct", "%.1f%%"),
                  " of wavefronts)\n");
  // Suspect figures that the lines above do not show.
  for (const std::string& s : c.suspect()) {
    bool shown = false;
    for (const char* name : kShownFigures) {
      const absl::string_view n(name);
      shown =
          shown ||
          (absl::StartsWith(s, n) &&
           (s.size() == n.size() || s[n.size()] == ' ' || s[n.size()] == ':'));
    }
    if (!shown) absl::StrAppend(out, indent, "suspect: ", s, "\n");
  }
  AppendStalls(l, indent, out);
}

void AppendProfileRank(const v1::ProfileReport& p, absl::string_view indent,
                       std::string* out) {
  if (p.world_size() <= 1) return;
  absl::StrAppend(
      out, indent, "ranks: the launches and counters are rank ", p.rank(),
      "'s of ", p.world_size(),
      ", its kernels run alone with every rank's inputs in place; the "
      "throughput is of its share (1/",
      p.world_size(), ") of the work; the timing is every rank's\n");
}

void AppendProfileAnalysis(const v1::ProfileReport& p, absl::string_view indent,
                           std::string* out) {
  if (!p.counters_unavailable().empty()) {
    absl::StrAppend(out, indent,
                    "counters: unavailable: ", p.counters_unavailable(),
                    " (timing and the launch facts above still hold)\n");
  } else if (!p.preset().empty() || p.passes() > 0) {
    absl::StrAppend(out, indent, "counters: preset ",
                    p.preset().empty() ? std::string("?") : p.preset(), ", ",
                    p.passes(), p.passes() == 1 ? " pass" : " passes",
                    " per kernel (cold L2 each), ",
                    internal::FormatMs(p.counters_ms()), " collecting\n");
  }
  AppendMissing(p, indent, out);
  const int refs = p.reference_launches_size();
  for (int i = 0; i < refs && i < kMaxReferenceKernels; ++i) {
    const v1::LaunchProfile& r = p.reference_launches(i);
    absl::StrAppend(
        out, indent, "reference kernel: ", r.entry(), ": ",
        Duration(r.time().median_us() > 0 ? r.time().median_us()
                                          : r.counters().gpu_time_us()),
        absl::StrFormat(" (%.1f%% of the reference)", r.share_pct()));
    if (r.has_counters() && r.counters().dram_pct_of_peak() > 0) {
      absl::StrAppend(out, absl::StrFormat(", DRAM %.1f%% of peak",
                                           r.counters().dram_pct_of_peak()));
    }
    absl::StrAppend(out, "\n");
  }
  if (refs > kMaxReferenceKernels) {
    absl::StrAppend(out, indent, "... ", refs - kMaxReferenceKernels,
                    " more reference kernels\n");
  }
  if (p.has_headroom()) {
    const v1::Headroom& h = p.headroom();
    absl::StrAppend(out, indent, "headroom: ", h.note(), " [floors: memory ",
                    Duration(h.memory_floor_us()), ", compute ",
                    Duration(h.compute_floor_us()), ", launch ",
                    Duration(h.launch_floor_us()), "]\n");
  }
  if (p.has_roofline()) {
    const v1::Roofline& r = p.roofline();
    absl::StrAppend(
        out, indent, "roofline: ",
        r.bound().empty() ? "" : absl::StrCat(r.bound(), "-bound: "),
        r.reason(), "\n");
  }
  if (!p.hot_lines().empty()) {
    absl::StrAppend(out, indent, "hot lines (PC sampling, ", p.pc_samples(),
                    " samples):\n");
    for (const v1::SourceLine& l : p.hot_lines()) {
      const size_t slash = l.file().find_last_of('/');
      std::vector<std::string> states;
      for (const v1::StallReason& r : l.top_stalls()) {
        states.push_back(
            absl::StrFormat("%s %.0f%%", r.reason(), r.share_pct()));
      }
      absl::StrAppend(
          out, indent, "  ",
          slash == std::string::npos ? l.file() : l.file().substr(slash + 1),
          ":", l.line(), absl::StrFormat("  %.1f%%  ", l.sample_pct()),
          l.text().empty() ? "(no source text)" : l.text(), "  [",
          absl::StrJoin(states, ", "), "]",
          l.global_load_requests() > 0
              ? absl::StrFormat("  loads: %.2f sectors/request (%d requests)",
                                l.global_load_sectors_per_request(),
                                l.global_load_requests())
              : "",
          "\n");
    }
  }
  if (!p.hints().empty()) {
    absl::StrAppend(out, indent, "hints:\n");
    for (const v1::ProfileHint& h : p.hints()) {
      absl::StrAppend(out, indent, "  [", h.rule(), "] ", h.metric(), "=",
                      HintValue(h.value()), " ", h.threshold(), ": ",
                      h.message(), "\n");
    }
  }
  if (!p.deltas().empty()) {
    absl::StrAppend(out, indent, "delta vs previous profile (job ",
                    p.previous_job_id(), "):\n");
    for (const v1::MetricDelta& d : p.deltas()) {
      absl::StrAppend(out, indent, "  ", d.figure(), ": ", FormatDeltaValues(d),
                      "  ", d.regressed() ? "REGRESSED" : "ok", "\n");
    }
  }
}

}  // namespace kbench
