// Text rendering of kbench reports for people and LLM agents: verdicts,
// compile reports, finished jobs, job lists, GPU specs and problems. Shared
// by kbctl and the MCP and HTTP front ends.
//
// Every number carries its unit; lines are short and labelled. The
// functions are pure (no I/O, no clock): the same message always renders to
// the same text.
//
// Thread safety: free functions on values; safe to call concurrently.
#ifndef KBENCH_REPORT_REPORT_TEXT_H_
#define KBENCH_REPORT_REPORT_TEXT_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "contract/job_defaults.h"
#include "kbench/v1/kbench.pb.h"
#include "kbench/v1/problem.pb.h"
#include "kbench/v1/report.pb.h"
// Enum names and units, used throughout the text below.
#include "base/units.h"
#include "contract/names.h"

namespace kbench {

// The compile report: a verdict line ("compile: ok (sm_90, 52 ms, cached)"
// or "compile: FAILED (3 errors)"), one resource line per kernel, the launch
// plan, the diagnostics as "<filename>:<line>: <severity>: <message>" and
// the trimmed NVRTC log when no diagnostic was parsed.
std::string FormatCompileReport(
    const v1::CompileReport& report,
    absl::string_view filename = kDefaultKernelFileName);

// The report of a job for people and agents. A finished job starts with
// "VERDICT: <verdict>" and its id, kind, problem and shape set; an
// unfinished one with "STAGE: <stage>". Then the sections present: the
// error, compile, correctness, timing, profile, GPU and worker, log.
std::string FormatJob(const v1::Job& job);

// For a problem that spans GPUs, each rank's own medians, e.g. "each
// rank's own span (GPU time), kernel / reference: rank 0: 7.10 us / 18.2
// us; rank 1: 7.30 us / 18.4 us": on GPU time where every rank has it,
// else on events. "" when the timing has no ranks.
std::string FormatRankTimes(const v1::TimingReport& t);

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

#endif  // KBENCH_REPORT_REPORT_TEXT_H_
