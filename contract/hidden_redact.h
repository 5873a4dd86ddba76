// Redaction of hidden cases: submit_kernel also runs hidden seeds and hidden
// shape sets, and a caller may learn only that a hidden case failed and its
// error figures, never its shape, dims, seed or first mismatching index.
//
// Thread safety: pure functions; safe to call concurrently.
#ifndef KBENCH_CONTRACT_HIDDEN_REDACT_H_
#define KBENCH_CONTRACT_HIDDEN_REDACT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "kbench/v1/problem.pb.h"
#include "kbench/v1/report.pb.h"

namespace kbench {

// The name hidden trials carry after redaction.
inline constexpr char kHiddenSetName[] = "hidden";

// The one-line failure of a hidden trial: "failed on WORDS: N of M outputs
// ..." with the error figures only. WORDS name the case without
// identifying it: "a hidden case", or HiddenCaseWords (contract/holdout.h)
// of a drawn class, "a hidden mid-size case (B in 257..4096, ...)".
std::string HiddenTrialFailure(const v1::TrialResult& trial,
                               absl::string_view words = "a hidden case");

// The status for a launch plan that is invalid on a hidden case (a grid,
// block or shared-memory limit): the code of `status`, a message that names
// no shape or dims, only `words` (as for HiddenTrialFailure). kbd uses it
// when it resolves the plan, the runner when it checks it on the GPU.
absl::Status HiddenPlanError(const absl::Status& status,
                             absl::string_view words);

// Clears shape_set (to "hidden"; a set drawn from a holdout class keeps its
// public name, "hidden:<class>"), shape, dims, seed, first_mismatch and
// kernel_ms of every hidden trial of `result` (marked hidden, or of a set
// named in `hidden_names`), and replaces a message or correctness message
// that names a hidden set or shape with a hidden-case message.
// `hidden_names` are the names of the hidden shape sets and their shapes.
void RedactHiddenCases(const std::vector<std::string>& hidden_names,
                       v1::JobResult* result);

// Names of the problem's hidden shape sets and of their shapes, and those
// of the sets and shapes drawn from its holdout classes, for
// RedactHiddenCases.
std::vector<std::string> HiddenNames(const v1::Problem& problem);

}  // namespace kbench

#endif  // KBENCH_CONTRACT_HIDDEN_REDACT_H_
