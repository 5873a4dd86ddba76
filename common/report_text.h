// Text rendering of kbench reports for people and LLM agents: verdicts,
// compile reports, finished jobs, job lists, GPU specs and problems. Shared
// by kbctl and the MCP and HTTP front ends.
//
// Every number carries its unit; lines are short and labelled. The
// functions are pure (no I/O, no clock): the same message always renders to
// the same text.
//
// Thread safety: free functions on values; safe to call concurrently.
#ifndef KBENCH_COMMON_REPORT_TEXT_H_
#define KBENCH_COMMON_REPORT_TEXT_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "kbench/v1/kbench.pb.h"
#include "kbench/v1/problem.pb.h"
#include "kbench/v1/report.pb.h"

namespace kbench {

// "passed", "failed", "crashed", "timed_out", "rejected", "compile_error",
// "cancelled", "error"; "unspecified" for VERDICT_UNSPECIFIED.
std::string VerdictName(v1::Verdict verdict);

// "queued", "compiling", "waiting_gpu", "running", "done"; "unspecified"
// for STAGE_UNSPECIFIED.
std::string StageName(v1::Stage stage);

// "compile", "correctness", "profile", "submit"; "unspecified" otherwise.
std::string JobKindName(v1::JobKind kind);

// The agent tool a job kind serves: "compile_kernel", "run_correctness",
// "profile_kernel", "submit_kernel" ("job" for others).
std::string ToolNameOf(v1::JobKind kind);

// Canonical gRPC / google.rpc code names: 0 "OK", 3 "INVALID_ARGUMENT",
// 14 "UNAVAILABLE", ...; "CODE_<n>" outside 0..16.
std::string StatusCodeName(int code);

// A time given in microseconds, in the unit that reads best, with three or
// four significant digits: "0.85 us", "12.3 us", "999 us", "1.234 ms",
// "2.50 s". Rounding never yields "1000 us" (that is "1.000 ms"). NaN and
// infinities render as "n/a".
std::string FormatDuration(double us);

// A byte count: "0 B", "512 B", "48 KiB", "1.5 MiB", "139.8 GiB".
std::string FormatBytes(int64_t bytes);

// The compile report: a verdict line ("compile: ok (sm_90, 52 ms, cached)"
// or "compile: FAILED (3 errors)"), one resource line per kernel, the launch
// plan, the diagnostics as "<filename>:<line>: <severity>: <message>" and
// the trimmed NVRTC log when no diagnostic was parsed.
std::string FormatCompileReport(const v1::CompileReport& report,
                                absl::string_view filename = "kernel.cu");

// The report of a job for people and agents. A finished job starts with
// "VERDICT: <verdict>" and its id, kind, problem and shape set; an
// unfinished one with "STAGE: <stage>". Then the sections present: the
// error, compile, correctness, timing, profile, GPU and worker, log.
std::string FormatJob(const v1::Job& job);

// One line for job lists: id, kind, stage, verdict, problem, created time
// (UTC ISO-8601) and duration (created to finished; "-" while unfinished).
std::string FormatJobLine(const v1::Job& job);

// A page of jobs: a header line, one FormatJobLine per job ("no jobs" when
// empty) and, when there are more, the page token to pass for the next.
std::string FormatJobList(const v1::ListJobsResponse& response);

// The connected GPU workers, one block per GPU; "no GPU worker is
// connected" when there is none.
std::string FormatGpuSpecs(const v1::GetGpuSpecsResponse& specs);

// A problem: name and title, dims with their domains, tensors, the entry
// point's C prototype, shape sets and tolerance. `verbose` adds the
// statement and the reference pseudo-code.
std::string FormatProblem(const v1::Problem& problem, bool verbose);

}  // namespace kbench

#endif  // KBENCH_COMMON_REPORT_TEXT_H_
