// Tool results as compact text written for a model: the verdict first,
// short labelled lines, a unit on every number, no raw dumps (long compiler
// logs are cut to the first errors, line numbers kept). Used by the agent
// tools (MCP and HTTP); kbctl prints the fuller report_text forms.
//
// Thread safety: pure functions.
#ifndef KBENCH_AGENT_AGENT_REPORT_H_
#define KBENCH_AGENT_AGENT_REPORT_H_

#include <string>

#include "kbench/v1/kbench.pb.h"

namespace kbench {

// A finished job of any tool (compile, correctness, profile, submit).
std::string AgentJobText(const v1::Job& job);
// The sanitize_kernel part of a job's text: one line per tool run, then each
// finding with its source line; "" when `report` has no runs. `filename`
// stands in for findings without a file.
std::string AgentSanitizeText(const v1::SanitizeReport& report,
                              const std::string& filename);

// The GPUs, their limits, and the ceilings measured on them beside the
// datasheet peaks (labelled as such).
std::string AgentSpecsText(const v1::GetGpuSpecsResponse& specs);

// Statement, reference semantics, signature, contract with an example,
// public shapes, dtype and tolerance.
std::string AgentProblemText(const v1::GetProblemResponse& problem);
// list_problems: "N problems" (of the suite), one line per problem (name,
// title, suites), then every suite.
std::string AgentProblemListText(const v1::ListProblemsResponse& list);

// Two turns side by side: verdicts, time and speedup change, source diff.
std::string AgentCompareText(const v1::CompareRunsResponse& compare);

}  // namespace kbench

#endif  // KBENCH_AGENT_AGENT_REPORT_H_
