#include "report/report_text.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "report/report_text_internal.h"

namespace kbench {
namespace {

using internal::CompileHeadline;
using internal::IndentedExcerpt;

int CountSeverity(const v1::CompileReport& report, absl::string_view sev) {
  int n = 0;
  for (const v1::Diagnostic& d : report.diagnostics()) {
    if (d.severity() == sev) ++n;
  }
  return n;
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

// The columns of a job list, padded so that lines align.
std::string JobRow(absl::string_view id, absl::string_view kind,
                   absl::string_view stage, absl::string_view verdict,
                   absl::string_view problem, absl::string_view created,
                   absl::string_view duration) {
  return absl::StrFormat("%-16s %-11s %-11s %-13s %-22s %-21s %s", id, kind,
                         stage, verdict, problem, created, duration);
}

}  // namespace

namespace internal {

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

}  // namespace internal

std::string FormatCompileReport(const v1::CompileReport& report,
                                absl::string_view filename) {
  if (filename.empty()) filename = kDefaultKernelFileName;
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
