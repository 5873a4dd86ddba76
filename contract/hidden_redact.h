// Redaction of hidden cases: submit_kernel also runs hidden seeds and hidden
// shape sets, and a caller may learn only that a hidden case failed and its
// error figures, never its shape, dims, seed or first mismatching index.
//
// Thread safety: pure functions; safe to call concurrently.
#ifndef KBENCH_CONTRACT_HIDDEN_REDACT_H_
#define KBENCH_CONTRACT_HIDDEN_REDACT_H_

#include <string>
#include <vector>

#include "kbench/v1/problem.pb.h"
#include "kbench/v1/report.pb.h"

namespace kbench {

// The name hidden trials carry after redaction.
inline constexpr char kHiddenSetName[] = "hidden";

// The one-line failure of a hidden trial: "failed on a hidden case: N of M
// outputs ..." with the error figures only.
std::string HiddenTrialFailure(const v1::TrialResult& trial);

// Clears shape_set (to "hidden"), shape, dims, seed and first_mismatch of
// every hidden trial of `result` (marked hidden, or of a set named in
// `hidden_names`), and replaces a message or correctness
// message that names a hidden set or shape with a hidden-case message.
// `hidden_names` are the names of the hidden shape sets and their shapes.
void RedactHiddenCases(const std::vector<std::string>& hidden_names,
                       v1::JobResult* result);

// Names of the problem's hidden shape sets and of their shapes, for
// RedactHiddenCases.
std::vector<std::string> HiddenNames(const v1::Problem& problem);

}  // namespace kbench

#endif  // KBENCH_CONTRACT_HIDDEN_REDACT_H_
