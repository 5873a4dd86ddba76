// Names of the contract's enums as people, logs and metrics labels read
// them: verdicts, job stages, job kinds and the tools they serve, and gRPC
// status codes. Kept apart from report/ so that the server core can label
// metrics and write messages without depending on the text layer.
//
// Thread safety: free functions on values; safe to call concurrently.
#ifndef KBENCH_CONTRACT_NAMES_H_
#define KBENCH_CONTRACT_NAMES_H_

#include <string>

#include "kbench/v1/kbench.pb.h"
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

}  // namespace kbench

#endif  // KBENCH_CONTRACT_NAMES_H_
