#include "contract/names.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace kbench {

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

std::string ToolNameOf(v1::JobKind kind) {
  switch (kind) {
    case v1::JOB_KIND_COMPILE:
      return "compile_kernel";
    case v1::JOB_KIND_CORRECTNESS:
      return "run_correctness";
    case v1::JOB_KIND_PROFILE:
      return "profile_kernel";
    case v1::JOB_KIND_SUBMIT:
      return "submit_kernel";
    case v1::JOB_KIND_SANITIZE:
      return "sanitize_kernel";
    default:
      return "job";
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
    case v1::JOB_KIND_SANITIZE:
      return "sanitize";
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

}  // namespace kbench
