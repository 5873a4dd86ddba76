#include "common/report_text.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"

namespace kbench {
namespace {

constexpr int kMaxTrialRows = 40;
constexpr int kMaxLogLines = 20;

// "1 error", "3 errors".
std::string Count(int64_t n, absl::string_view singular,
                  absl::string_view plural) {
  return absl::StrCat(n, " ", n == 1 ? singular : plural);
}

// Milliseconds for coarse times (compile, budgets): "52 ms", "1.50 s".
std::string FormatMs(double ms) {
  if (ms >= 1 && ms < 999.5) return absl::StrFormat("%.0f ms", ms);
  return FormatDuration(ms * 1e3);
}

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

// The first `max_lines` non-empty-trimmed lines of `text`, indented.
std::string IndentedExcerpt(absl::string_view text, int max_lines) {
  text = absl::StripAsciiWhitespace(text);
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  std::string out;
  const int shown = std::min<int>(max_lines, lines.size());
  for (int i = 0; i < shown; ++i) {
    absl::StrAppend(&out, "  ", absl::StripTrailingAsciiWhitespace(lines[i]),
                    "\n");
  }
  if (static_cast<int>(lines.size()) > shown) {
    absl::StrAppend(&out, "  ... (",
                    Count(lines.size() - shown, "more line", "more lines"),
                    ")\n");
  }
  return out;
}

int CountSeverity(const v1::CompileReport& report, absl::string_view sev) {
  int n = 0;
  for (const v1::Diagnostic& d : report.diagnostics()) {
    if (d.severity() == sev) ++n;
  }
  return n;
}

// "compile: ok (sm_90, 52 ms, cached)" or "compile: FAILED (3 errors)".
std::string CompileHeadline(const v1::CompileReport& report) {
  const int errors = CountSeverity(report, "error");
  const int warnings = CountSeverity(report, "warning");
  std::vector<std::string> facts;
  if (report.success()) {
    if (!report.arch().empty()) facts.push_back(report.arch());
    if (report.compile_ms() > 0) facts.push_back(FormatMs(report.compile_ms()));
    if (report.cached()) facts.push_back("cached");
    if (warnings > 0) facts.push_back(Count(warnings, "warning", "warnings"));
    return absl::StrCat("compile: ok (", absl::StrJoin(facts, ", "), ")");
  }
  if (errors > 0) facts.push_back(Count(errors, "error", "errors"));
  if (warnings > 0) facts.push_back(Count(warnings, "warning", "warnings"));
  if (facts.empty()) {
    facts.push_back(report.arch().empty()
                        ? std::string("see the log")
                        : absl::StrCat(report.arch(), "; see the log"));
  }
  return absl::StrCat("compile: FAILED (", absl::StrJoin(facts, ", "), ")");
}

std::string KernelResourcesLine(const v1::KernelResources& k) {
  std::string spills =
      k.spill_store_bytes() == 0 && k.spill_load_bytes() == 0
          ? "0 B spills"
          : absl::StrCat(FormatBytes(k.spill_store_bytes()), " spill stores, ",
                         FormatBytes(k.spill_load_bytes()), " spill loads");
  return absl::StrCat(k.name(), ": ", k.registers(), " registers/thread, ",
                      FormatBytes(k.static_smem_bytes()), " static smem, ",
                      FormatBytes(k.stack_frame_bytes()), " stack, ", spills);
}

std::string LaunchSpecLine(const v1::LaunchSpec& l) {
  std::string line = absl::StrCat("launch ", l.entry(), " grid(",
                                  absl::StrJoin(l.grid(), ", "), ") block(",
                                  absl::StrJoin(l.block(), ", "), ") smem(",
                                  l.smem().empty() ? "0" : l.smem(), ")");
  if (!l.args().empty()) {
    absl::StrAppend(&line, " args(", absl::StrJoin(l.args(), ", "), ")");
  }
  return line;
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
    if (t.nan_count() > 0)
      absl::StrAppend(&mismatches, " (", t.nan_count(), " NaN)");
    rows.push_back({absl::StrCat(t.shape_set(), "/", t.shape()),
                    FormatDimMap(t.dims()), absl::StrCat(t.seed()),
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
    if (first_failure != nullptr && !first_failure->first_mismatch().empty() &&
        !absl::StrContains(c.message(), first_failure->first_mismatch())) {
      absl::StrAppend(&line, "; first mismatch at ",
                      first_failure->first_mismatch(), " (trial ",
                      first_failure->shape_set(), "/", first_failure->shape(),
                      ", seed ", first_failure->seed(), ")");
    }
    absl::StrAppend(out, line, "\n");
  }
  if (c.has_tolerance()) {
    const v1::Tolerance& tol = c.tolerance();
    absl::StrAppend(
        out, absl::StrFormat("  tolerance: |out - ref| <= %g + %g * |ref| per "
                             "element, rel-norm <= %g\n",
                             tol.atol(), tol.rtol(), tol.max_rel_norm()));
  }
}

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
  if (s > 0 && std::isfinite(s)) {
    if (s >= 1) {
      absl::StrAppend(
          out,
          absl::StrFormat("  speedup: %.2fx faster than the reference\n", s));
    } else {
      absl::StrAppend(out, absl::StrFormat("  speedup: %.2fx — %.2fx slower "
                                           "than the reference\n",
                                           s, 1.0 / s));
    }
  } else {
    absl::StrAppend(out, "  speedup: n/a\n");
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
}

void AppendProfile(const v1::ProfileReport& p, std::string* out) {
  absl::StrAppend(out, "profile");
  if (!p.shape().empty() || !p.dims().empty()) {
    absl::StrAppend(out, " (", p.shape(), ", ", FormatDimMap(p.dims()), ")");
  }
  absl::StrAppend(out, ":\n");
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
}

// The columns of a job list, padded so that lines align.
std::string JobRow(absl::string_view id, absl::string_view kind,
                   absl::string_view stage, absl::string_view verdict,
                   absl::string_view problem, absl::string_view created,
                   absl::string_view duration) {
  return absl::StrFormat("%-16s %-11s %-11s %-13s %-22s %-21s %s", id, kind,
                         stage, verdict, problem, created, duration);
}

}  // namespace

std::string VerdictName(v1::Verdict verdict) {
  switch (verdict) {
    case v1::VERDICT_PASSED:
      return "passed";
    case v1::VERDICT_FAILED:
      return "failed";
    case v1::VERDICT_CRASHED:
      return "crashed";
    case v1::VERDICT_TIMED_OUT:
      return "timed_out";
    case v1::VERDICT_REJECTED:
      return "rejected";
    case v1::VERDICT_COMPILE_ERROR:
      return "compile_error";
    case v1::VERDICT_CANCELLED:
      return "cancelled";
    case v1::VERDICT_ERROR:
      return "error";
    default:
      return "unspecified";
  }
}

std::string StageName(v1::Stage stage) {
  switch (stage) {
    case v1::STAGE_QUEUED:
      return "queued";
    case v1::STAGE_COMPILING:
      return "compiling";
    case v1::STAGE_WAITING_GPU:
      return "waiting_gpu";
    case v1::STAGE_RUNNING:
      return "running";
    case v1::STAGE_DONE:
      return "done";
    default:
      return "unspecified";
  }
}

std::string JobKindName(v1::JobKind kind) {
  switch (kind) {
    case v1::JOB_KIND_COMPILE:
      return "compile";
    case v1::JOB_KIND_CORRECTNESS:
      return "correctness";
    case v1::JOB_KIND_PROFILE:
      return "profile";
    case v1::JOB_KIND_SUBMIT:
      return "submit";
    default:
      return "unspecified";
  }
}

std::string StatusCodeName(int code) {
  static const char* const kNames[] = {"OK",
                                       "CANCELLED",
                                       "UNKNOWN",
                                       "INVALID_ARGUMENT",
                                       "DEADLINE_EXCEEDED",
                                       "NOT_FOUND",
                                       "ALREADY_EXISTS",
                                       "PERMISSION_DENIED",
                                       "RESOURCE_EXHAUSTED",
                                       "FAILED_PRECONDITION",
                                       "ABORTED",
                                       "OUT_OF_RANGE",
                                       "UNIMPLEMENTED",
                                       "INTERNAL",
                                       "UNAVAILABLE",
                                       "DATA_LOSS",
                                       "UNAUTHENTICATED"};
  if (code < 0 || code > 16) return absl::StrCat("CODE_", code);
  return kNames[code];
}

std::string FormatDuration(double us) {
  if (!std::isfinite(us)) return "n/a";
  const char* sign = us < 0 ? "-" : "";
  const double a = std::fabs(us);
  // Thresholds sit where rounding would carry into the next digit, so
  // 999.7 us reads "1.000 ms", never "1000 us".
  if (a < 999.5) {
    const int decimals = a < 9.995 ? 2 : (a < 99.95 ? 1 : 0);
    return absl::StrFormat("%s%.*f us", sign, decimals, a);
  }
  if (a < 999950) {
    const double ms = a / 1e3;
    const int decimals = ms < 9.9995 ? 3 : (ms < 99.995 ? 2 : 1);
    return absl::StrFormat("%s%.*f ms", sign, decimals, ms);
  }
  const double s = a / 1e6;
  const int decimals = s < 9.995 ? 2 : (s < 99.95 ? 1 : 0);
  return absl::StrFormat("%s%.*f s", sign, decimals, s);
}

std::string FormatBytes(int64_t bytes) {
  if (bytes < 0) {
    return absl::StrCat("-",
                        FormatBytes(bytes == INT64_MIN ? INT64_MAX : -bytes));
  }
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (v >= 1023.95 && unit < 4) {
    v /= 1024;
    ++unit;
  }
  std::string number = absl::StrFormat("%.1f", v);
  if (absl::EndsWith(number, ".0")) number.resize(number.size() - 2);
  return absl::StrCat(number, " ", kUnits[unit]);
}

std::string FormatCompileReport(const v1::CompileReport& report,
                                absl::string_view filename) {
  if (filename.empty()) filename = "kernel.cu";
  std::string out = absl::StrCat(CompileHeadline(report), "\n");
  for (const v1::KernelResources& k : report.kernels()) {
    absl::StrAppend(&out, "  ", KernelResourcesLine(k), "\n");
  }
  if (report.has_plan()) {
    for (const v1::WorkspaceSpec& w : report.plan().workspaces()) {
      absl::StrAppend(&out, "  workspace ", w.name(), " bytes(", w.bytes(),
                      ")\n");
    }
    for (const v1::LaunchSpec& l : report.plan().launches()) {
      absl::StrAppend(&out, "  ", LaunchSpecLine(l), "\n");
    }
  }
  for (const v1::Diagnostic& d : report.diagnostics()) {
    std::string where(filename);
    if (d.line() > 0) absl::StrAppend(&where, ":", d.line());
    absl::StrAppend(&out, "  ", where, ": ",
                    d.severity().empty() ? "error" : d.severity(), ": ",
                    d.message(), "\n");
  }
  if (report.diagnostics().empty() &&
      !absl::StripAsciiWhitespace(report.log()).empty()) {
    absl::StrAppend(&out, "  log:\n", IndentedExcerpt(report.log(), 30));
  }
  return out;
}

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
    if (!r.gpu().arch().empty())
      absl::StrAppend(&out, " (", r.gpu().arch(), ")");
    if (!worker.empty()) absl::StrAppend(&out, " on worker ", worker);
    absl::StrAppend(&out, "\n");
  } else if (!worker.empty()) {
    absl::StrAppend(&out, "worker: ", worker, "\n");
  }
  if (r.runner_ms() > 0) {
    absl::StrAppend(&out, "runner time: ", FormatMs(r.runner_ms()), "\n");
  }
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

std::string FormatJobLine(const v1::Job& job) {
  const std::string created =
      job.created_unix_ms() > 0
          ? absl::FormatTime("%Y-%m-%dT%H:%M:%SZ",
                             absl::FromUnixMillis(job.created_unix_ms()),
                             absl::UTCTimeZone())
          : std::string("-");
  const std::string verdict = job.stage() == v1::STAGE_DONE
                                  ? VerdictName(job.result().verdict())
                                  : std::string("-");
  const std::string duration =
      job.finished_unix_ms() > 0 && job.created_unix_ms() > 0
          ? FormatDuration(static_cast<double>(job.finished_unix_ms() -
                                               job.created_unix_ms()) *
                           1e3)
          : std::string("-");
  return JobRow(job.id(), JobKindName(job.kind()), StageName(job.stage()),
                verdict, job.problem().empty() ? "-" : job.problem(), created,
                duration);
}

std::string FormatJobList(const v1::ListJobsResponse& response) {
  if (response.jobs().empty()) {
    return response.next_page_token().empty()
               ? "no jobs\n"
               : absl::StrCat("no jobs on this page; next page: --page-token ",
                              response.next_page_token(), "\n");
  }
  std::string out = absl::StrCat(JobRow("ID", "KIND", "STAGE", "VERDICT",
                                        "PROBLEM", "CREATED (UTC)", "DURATION"),
                                 "\n");
  for (const v1::Job& job : response.jobs()) {
    absl::StrAppend(&out, FormatJobLine(job), "\n");
  }
  if (!response.next_page_token().empty()) {
    absl::StrAppend(&out, "more jobs: --page-token ",
                    response.next_page_token(), "\n");
  }
  return out;
}

}  // namespace kbench
