// FormatJob (declared in report/report_text.h): the report of one job, with
// its error, compile, correctness, timing, profile, GPU and log sections.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "contract/problem_util.h"
#include "report/manifest_text.h"
#include "report/profile_text.h"
#include "report/report_text.h"
#include "report/report_text_internal.h"

namespace kbench {
namespace {

using internal::CompileHeadline;
using internal::Count;
using internal::FormatMs;
using internal::IndentedExcerpt;

constexpr int kMaxTrialRows = 40;
constexpr int kMaxLogLines = 20;

// A rate with three significant digits and no exponent when avoidable.
std::string FormatRate(double v, absl::string_view unit) {
  if (!std::isfinite(v)) return absl::StrCat("n/a ", unit);
  const double a = std::fabs(v);
  if (a != 0 && a < 0.01) return absl::StrFormat("%.3g %s", v, unit);
  const int decimals = a < 9.995 ? 2 : (a < 99.95 ? 1 : 0);
  return absl::StrFormat("%.*f %s", decimals, v, unit);
}

// Dims of a report (an unordered proto map) in name order: "B=12 H=32".
std::string FormatDimMap(
    const google::protobuf::Map<std::string, int64_t>& dims) {
  std::vector<std::pair<std::string, int64_t>> sorted(dims.begin(), dims.end());
  std::sort(sorted.begin(), sorted.end());
  return absl::StrJoin(sorted, " ", absl::PairFormatter("="));
}

std::string FormatStats(const v1::Stats& s) {
  if (s.n() == 0) return "no samples";
  return absl::StrCat("median ", FormatDuration(s.median_us()), ", mean ",
                      FormatDuration(s.mean_us()), ", std ",
                      FormatDuration(s.std_us()), ", min ",
                      FormatDuration(s.min_us()), ", n=", s.n());
}

// Left-aligned columns separated by two spaces, each line indented.
std::string RenderTable(const std::vector<std::vector<std::string>>& rows,
                        absl::string_view indent) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line(indent);
    for (size_t i = 0; i < row.size(); ++i) {
      absl::StrAppend(&line, row[i]);
      if (i + 1 < row.size()) line.append(widths[i] - row[i].size() + 2, ' ');
    }
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

std::string JobContext(const v1::Job& job) {
  std::vector<std::string> parts;
  if (!job.id().empty()) parts.push_back(absl::StrCat("job ", job.id()));
  if (job.kind() != v1::JOB_KIND_UNSPECIFIED) {
    parts.push_back(JobKindName(job.kind()));
  }
  if (!job.problem().empty()) {
    parts.push_back(absl::StrCat("problem ", job.problem()));
  }
  if (!job.shape_set().empty()) {
    parts.push_back(absl::StrCat("shape set ", job.shape_set()));
  }
  return absl::StrJoin(parts, ", ");
}

void AppendCorrectness(const v1::CorrectnessReport& c, std::string* out) {
  absl::StrAppend(out, "correctness:\n");
  // Every failing trial is shown; passing ones fill the rest of the rows.
  int failing = 0;
  for (const v1::TrialResult& t : c.trials()) failing += t.passed() ? 0 : 1;
  int passing_room = std::max(0, kMaxTrialRows - failing);
  int hidden = 0;
  std::vector<std::vector<std::string>> rows = {
      {"trial", "dims", "seed", "max abs err", "max rel err", "rel-norm err",
       "mismatches", "result"}};
  const v1::TrialResult* first_failure = nullptr;
  for (const v1::TrialResult& t : c.trials()) {
    if (!t.passed() && first_failure == nullptr) first_failure = &t;
    if (t.passed()) {
      if (passing_room == 0) {
        ++hidden;
        continue;
      }
      --passing_room;
    }
    std::string mismatches = absl::StrCat(t.mismatches());
    if (t.mismatches() > 0 && t.elements() > 0) {
      absl::StrAppend(&mismatches, " of ", t.elements());
    }
    if (t.nan_count() > 0) {
      absl::StrAppend(&mismatches, " (", t.nan_count(), " NaN)");
    }
    rows.push_back({t.hidden() ? std::string("(hidden case)")
                               : absl::StrCat(t.shape_set(), "/", t.shape()),
                    t.hidden() ? std::string("-") : FormatDimMap(t.dims()),
                    t.hidden() ? std::string("-") : absl::StrCat(t.seed()),
                    absl::StrFormat("%.2e", t.max_abs_error()),
                    absl::StrFormat("%.2e", t.max_rel_error()),
                    absl::StrFormat("%.2e", t.rel_norm_error()), mismatches,
                    t.passed() ? "pass" : "FAIL"});
  }
  if (rows.size() > 1) absl::StrAppend(out, RenderTable(rows, "  "));
  if (hidden > 0) {
    absl::StrAppend(out, "  ... ",
                    Count(hidden, "more passing trial", "more passing trials"),
                    " not shown\n");
  }
  const std::string tally =
      absl::StrCat(c.trials_passed(), "/", c.trials_run(), " trials passed");
  if (c.passed()) {
    absl::StrAppend(out, "  ", tally, "\n");
  } else {
    std::string line = absl::StrCat("  FAILED: ", tally);
    if (!c.message().empty()) absl::StrAppend(&line, ": ", c.message());
    if (first_failure != nullptr && !first_failure->hidden() &&
        !first_failure->first_mismatch().empty() &&
        !absl::StrContains(c.message(), first_failure->first_mismatch())) {
      absl::StrAppend(&line, "; first mismatch at ",
                      first_failure->first_mismatch(), " (trial ",
                      first_failure->shape_set(), "/", first_failure->shape(),
                      ", seed ", first_failure->seed(), ")");
    }
    absl::StrAppend(out, line, "\n");
  }
  if (c.has_tolerance()) {
    absl::StrAppend(out, "  tolerance: ", ToleranceText(c.tolerance()), "\n");
  }
}

// One line per timing basis measured: kernel and reference medians per run
// and their ratio; the speedup's basis is marked.
void AppendTimingBases(const v1::TimingReport& t, std::string* out) {
  struct Basis {
    v1::TimingBasis basis;
    std::string name;
    const v1::Stats& kernel;
    const v1::Stats& reference;
    const v1::Stats& expert;
  };
  const Basis bases[] = {
      {v1::TIMING_BASIS_GPU_TIME,
       "GPU time (CUPTI, the GPU taking the first launch to the last "
       "kernel's end; ncu's gpu__time_duration)",
       t.kernel_gpu(), t.reference_gpu(), t.expert_gpu()},
      {v1::TIMING_BASIS_EVENTS, "events around each run (launches included)",
       t.kernel(), t.reference(), t.expert()},
      {v1::TIMING_BASIS_GRAPH,
       absl::StrCat("CUDA graph replay, steady state (", t.graph_runs(),
                    " runs per replay)"),
       t.kernel_graph(), t.reference_graph(), t.expert_graph()}};
  bool any = false;
  const bool expert = t.expert().n() > 0;
  for (const Basis& b : bases) {
    if (b.kernel.n() == 0) continue;
    if (!any) {
      absl::StrAppend(out, "  time per run on each basis, kernel / reference",
                      expert ? " (its ratio) / expert baseline" : "", ":\n");
    }
    any = true;
    const double ratio = b.reference.n() > 0 && b.kernel.median_us() > 0
                             ? b.reference.median_us() / b.kernel.median_us()
                             : 0;
    absl::StrAppend(
        out, "    ", b.name, ": ", FormatDuration(b.kernel.median_us()), " / ",
        b.reference.n() > 0 ? FormatDuration(b.reference.median_us()) : "-",
        ratio > 0 ? absl::StrFormat(", %.2fx", ratio) : std::string(),
        !expert ? std::string()
        : b.expert.n() > 0
            ? absl::StrCat(" / ", FormatDuration(b.expert.median_us()))
            : std::string(" / -"),
        b.basis == t.speedup_basis() ? "  <- speedup" : "", "\n");
  }
}

}  // namespace

std::string FormatRankTimes(const v1::TimingReport& t) {
  if (t.ranks().empty()) return "";
  bool gpu = true;
  for (const v1::RankTiming& r : t.ranks()) {
    gpu = gpu && r.kernel_gpu().n() > 0 && r.reference_gpu().n() > 0;
  }
  std::vector<std::string> parts;
  for (const v1::RankTiming& r : t.ranks()) {
    const v1::Stats& k = gpu ? r.kernel_gpu() : r.kernel();
    const v1::Stats& ref = gpu ? r.reference_gpu() : r.reference();
    parts.push_back(absl::StrCat("rank ", r.rank(), ": ",
                                 FormatDuration(k.median_us()), " / ",
                                 FormatDuration(ref.median_us())));
  }
  return absl::StrCat("each rank's own span (", gpu ? "GPU time" : "events",
                      "), kernel / reference: ", absl::StrJoin(parts, "; "));
}

namespace {

void AppendTiming(const v1::TimingReport& t, std::string* out) {
  absl::StrAppend(out, "timing");
  if (!t.shape().empty() || !t.dims().empty()) {
    absl::StrAppend(out, " (", t.shape_set(), "/", t.shape(), ", ",
                    FormatDimMap(t.dims()), ")");
  }
  absl::StrAppend(out, ":\n  kernel: ", FormatStats(t.kernel()), "\n");
  if (t.has_reference()) {
    std::string name = t.reference_name().empty()
                           ? std::string()
                           : absl::StrCat(t.reference_name(), ", ");
    absl::StrAppend(out, "  reference (", name,
                    Count(t.reference_launches(), "launch", "launches"),
                    "): ", FormatStats(t.reference()), "\n");
  }
  const double s = t.speedup();
  const char* basis =
      t.speedup_basis() == v1::TIMING_BASIS_GPU_TIME ? " (GPU time)"
      : t.speedup_basis() == v1::TIMING_BASIS_EVENTS ? " (events)"
                                                     : "";
  if (s > 0 && std::isfinite(s)) {
    if (s >= 1) {
      absl::StrAppend(out, absl::StrFormat("  speedup: %.2fx faster than the "
                                           "reference%s\n",
                                           s, basis));
    } else {
      absl::StrAppend(out, absl::StrFormat("  speedup: %.2fx — %.2fx slower "
                                           "than the reference%s\n",
                                           s, 1.0 / s, basis));
    }
  } else {
    absl::StrAppend(out, "  speedup: n/a\n");
  }
  if (t.has_expert()) {
    // Where the kernel stands between what PyTorch does and what an
    // expert does.
    absl::StrAppend(out, "  expert baseline (", t.expert_name(), ", ",
                    Count(t.expert_launches(), "launch", "launches"),
                    "): ", FormatStats(t.expert()), "\n");
    const double e = t.speedup_vs_expert();
    if (e > 0 && std::isfinite(e)) {
      absl::StrAppend(
          out, e >= 1
                   ? absl::StrFormat("  against it: %.2fx faster%s\n", e, basis)
                   : absl::StrFormat("  against it: %.2fx — %.2fx slower%s\n",
                                     e, 1.0 / e, basis));
    }
  }
  AppendTimingBases(t, out);
  if (!t.ranks().empty()) {
    absl::StrAppend(out, "  ", FormatRankTimes(t), "\n");
  }
  absl::StrAppend(out, "  launches: ", t.kernel_launches(), " vs ",
                  t.reference_launches(), " (reference)\n");
  absl::StrAppend(out, "  L2: ",
                  t.l2_flushed() ? "cold (flushed before each sample)"
                                 : "hot (not flushed between samples)",
                  "\n");
  if (!t.stop_reason().empty()) {
    absl::StrAppend(out, "  stop reason: ", t.stop_reason(), "\n");
  }
  if (t.sm_clock_before_mhz() > 0 || t.sm_clock_after_mhz() > 0) {
    absl::StrAppend(
        out, absl::StrFormat("  SM clock: %.0f MHz before, %.0f MHz "
                             "after timing%s\n",
                             t.sm_clock_before_mhz(), t.sm_clock_after_mhz(),
                             t.throttled() ? " (THROTTLED)" : ""));
  }
  if (!t.gpu_time_note().empty()) {
    absl::StrAppend(out, "  note: ", t.gpu_time_note(), "\n");
  }
  if (!t.clock_note().empty()) {
    absl::StrAppend(out, "  note: ", t.clock_note(), "\n");
  }
  if (t.floor_us() > 0) {
    absl::StrAppend(out, "  physical floor: ", FormatDuration(t.floor_us()),
                    " (min bytes / peak bandwidth, FLOPs / peak rate)\n");
  }
}

void AppendProfile(const v1::ProfileReport& p, std::string* out) {
  absl::StrAppend(out, "profile");
  if (!p.shape().empty() || !p.dims().empty()) {
    absl::StrAppend(out, " (", p.shape(), ", ", FormatDimMap(p.dims()), ")");
  }
  absl::StrAppend(out, ":\n");
  AppendProfileRank(p, "  ", out);
  int index = 0;
  for (const v1::LaunchProfile& l : p.launches()) {
    ++index;
    absl::StrAppend(out, "  launch ", index, ": ", l.entry(), " grid(",
                    absl::StrJoin(l.grid(), ", "), ") block(",
                    absl::StrJoin(l.block(), ", "), ")\n");
    absl::StrAppend(out, "    ", l.registers(), " registers/thread, ",
                    FormatBytes(l.local_bytes()), " local/thread; smem ",
                    FormatBytes(l.static_smem_bytes()), " static + ",
                    FormatBytes(l.dynamic_smem_bytes()), " dynamic + ",
                    FormatBytes(l.reserved_smem_bytes()),
                    " reserved per block\n");
    absl::StrAppend(
        out, absl::StrFormat("    occupancy %.1f%% theoretical (%d blocks/SM), "
                             "%.2f waves\n",
                             l.theoretical_occupancy_pct(), l.blocks_per_sm(),
                             l.waves()));
    absl::StrAppend(out, "    time: median ",
                    FormatDuration(l.time().median_us()),
                    absl::StrFormat(" (%.1f%% of the plan)\n", l.share_pct()));
    AppendLaunchCounters(p, l, "    ", out);
  }
  if (p.has_total()) {
    absl::StrAppend(out, "  total: ", FormatStats(p.total()), "\n");
  }
  if (p.achieved_tflops() > 0 || p.achieved_gbps() > 0) {
    absl::StrAppend(
        out, "  achieved: ", FormatRate(p.achieved_tflops(), "TFLOP/s"), ", ",
        FormatRate(p.achieved_gbps(), "GB/s"),
        absl::StrFormat(" (%.3g FLOP, ", p.flops()),
        FormatBytes(static_cast<int64_t>(p.min_bytes())), " moved at least)\n");
  }
  AppendProfileAnalysis(p, "  ", out);
}

}  // namespace

std::string FormatJob(const v1::Job& job) {
  const v1::JobResult& r = job.result();
  std::string out;
  const std::string context = JobContext(job);
  if (job.stage() == v1::STAGE_DONE) {
    absl::StrAppend(&out, "VERDICT: ", VerdictName(r.verdict()));
  } else {
    absl::StrAppend(&out, "STAGE: ", StageName(job.stage()));
    if (!job.stage_detail().empty()) {
      absl::StrAppend(&out, ": ", job.stage_detail());
    }
    if (job.queue_position() > 0) {
      absl::StrAppend(&out, ", queue position ", job.queue_position());
    }
  }
  if (!context.empty()) absl::StrAppend(&out, " (", context, ")");
  absl::StrAppend(&out, "\n");

  if (r.has_error() &&
      (r.error().code() != 0 || !r.error().message().empty())) {
    absl::StrAppend(&out, "error: ", StatusCodeName(r.error().code()), ": ",
                    r.error().message(), "\n");
  }
  if (r.has_compile()) {
    const v1::CompileReport& c = r.compile();
    if (job.kind() == v1::JOB_KIND_COMPILE || !c.success()) {
      absl::StrAppend(&out, FormatCompileReport(c, job.filename()));
    } else {
      std::vector<std::string> kernels;
      for (const v1::KernelResources& k : c.kernels()) {
        kernels.push_back(absl::StrCat(
            k.name(), " ", k.registers(), " registers/thread",
            k.spill_store_bytes() + k.spill_load_bytes() > 0 ? ", spills"
                                                             : ""));
      }
      absl::StrAppend(&out, CompileHeadline(c));
      if (!kernels.empty()) {
        absl::StrAppend(&out, "; ", absl::StrJoin(kernels, "; "));
      }
      absl::StrAppend(&out, "\n");
    }
  }
  if (r.has_correctness()) AppendCorrectness(r.correctness(), &out);
  if (r.has_timing()) {
    AppendTiming(r.timing(), &out);
  } else if (r.has_profile() && r.profile().has_timing()) {
    AppendTiming(r.profile().timing(), &out);
  }
  if (r.has_profile()) AppendProfile(r.profile(), &out);

  const std::string& worker =
      r.worker_id().empty() ? job.worker_id() : r.worker_id();
  if (r.has_gpu() && !r.gpu().name().empty()) {
    absl::StrAppend(&out, "gpu: ", r.gpu().name());
    if (!r.gpu().arch().empty()) {
      absl::StrAppend(&out, " (", r.gpu().arch(), ")");
    }
    if (!worker.empty()) absl::StrAppend(&out, " on worker ", worker);
    absl::StrAppend(&out, "\n");
  } else if (!worker.empty()) {
    absl::StrAppend(&out, "worker: ", worker, "\n");
  }
  if (r.runner_ms() > 0) {
    absl::StrAppend(&out, "runner time: ", FormatMs(r.runner_ms()), "\n");
  }
  absl::StrAppend(&out, ManifestText(r.manifest()));
  if (job.attempts() > 1) {
    absl::StrAppend(&out, "attempts: ", job.attempts(),
                    " (the job was leased again after a worker failed)\n");
  }
  if (job.finished_unix_ms() > 0 && job.created_unix_ms() > 0) {
    absl::StrAppend(&out, "job time: ",
                    FormatDuration(static_cast<double>(job.finished_unix_ms() -
                                                       job.created_unix_ms()) *
                                   1e3),
                    " from submission to result\n");
  }
  if (!absl::StripAsciiWhitespace(r.log()).empty()) {
    absl::StrAppend(&out, "log:\n", IndentedExcerpt(r.log(), kMaxLogLines));
  }
  return out;
}

}  // namespace kbench
