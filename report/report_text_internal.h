// Helpers shared by report/report_text.cc (names, durations, compile
// reports, job lines) and report/report_text_job.cc (FormatJob). Not part of
// the public API: include report/report_text.h instead.
//
// Thread safety: pure functions on values; safe to call concurrently.
#ifndef KBENCH_REPORT_REPORT_TEXT_INTERNAL_H_
#define KBENCH_REPORT_REPORT_TEXT_INTERNAL_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "kbench/v1/report.pb.h"

namespace kbench {
namespace internal {

// "1 error", "3 errors".
std::string Count(int64_t n, absl::string_view singular,
                  absl::string_view plural);

// Milliseconds for coarse times (compile, budgets): "52 ms", "1.50 s".
std::string FormatMs(double ms);

// The first `max_lines` non-empty-trimmed lines of `text`, indented.
std::string IndentedExcerpt(absl::string_view text, int max_lines);

// "compile: ok (sm_90, 52 ms, cached)" or "compile: FAILED (3 errors)".
std::string CompileHeadline(const v1::CompileReport& report);

}  // namespace internal
}  // namespace kbench

#endif  // KBENCH_REPORT_REPORT_TEXT_INTERNAL_H_
