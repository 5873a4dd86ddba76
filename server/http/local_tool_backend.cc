#include "server/http/local_tool_backend.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "spdlog/spdlog.h"

namespace kbench {

absl::StatusOr<v1::GetGpuSpecsResponse> LocalToolBackend::GetGpuSpecs(
    const std::string& session_id) {
  return jobs_->GetGpuSpecs(session_id);
}

absl::StatusOr<v1::GetProblemResponse> LocalToolBackend::GetProblem(
    const std::string& name, const std::string& session_id) {
  return agent_->GetProblem(name, session_id);
}

absl::StatusOr<v1::Job> LocalToolBackend::RunJobUntil(
    v1::JobKind kind, const v1::KernelRequest& request,
    const std::function<bool()>& cancelled) {
  if (stopping_) {
    return absl::UnavailableError(
        "kbd is shutting down; retry once it is back");
  }
  // A client already gone gets no job.
  if (cancelled && cancelled()) {
    return absl::CancelledError("the client hung up before the job started");
  }
  absl::StatusOr<v1::Job> job = jobs_->Submit(kind, request);
  if (!job.ok()) return job.status();
  // Wait for DONE through a watch; the state outlives a timed-out wait.
  struct Wait {
    absl::Notification done;
    v1::Job job;
  };
  auto wait = std::make_shared<Wait>();
  absl::StatusOr<int64_t> token =
      jobs_->Watch(job->id(), [wait](const v1::Job& j) {
        if (j.stage() == v1::STAGE_DONE && !wait->done.HasBeenNotified()) {
          wait->job = j;
          wait->done.Notify();
        }
      });
  if (!token.ok()) return token.status();
  // Wait in slices, to notice Shutdown and the client hanging up (a poll of
  // its socket: cheap).
  const absl::Time deadline = absl::Now() + job_timeout_;
  while (!wait->done.WaitForNotificationWithTimeout(
      std::min(absl::Milliseconds(50), deadline - absl::Now()))) {
    const bool gone = cancelled && cancelled();
    if (!stopping_ && !gone && absl::Now() < deadline) continue;
    jobs_->Unwatch(job->id(), *token);
    (void)jobs_->Cancel(job->id());
    if (stopping_) {
      return absl::UnavailableError(
          absl::StrCat("kbd is shutting down; job ", job->id(),
                       " was cancelled; retry once it is back"));
    }
    if (gone) {
      spdlog::info("job {}: its HTTP client hung up; cancelled", job->id());
      return absl::CancelledError(absl::StrCat("the client hung up; job ",
                                               job->id(), " was cancelled"));
    }
    return absl::DeadlineExceededError(
        absl::StrCat("job ", job->id(), " did not finish within ",
                     absl::FormatDuration(job_timeout_), "; it was cancelled"));
  }
  jobs_->Unwatch(job->id(), *token);
  return jobs_->GetJob(job->id());
}

absl::StatusOr<v1::CompareRunsResponse> LocalToolBackend::CompareRuns(
    const std::string& session_id, int turn_a, int turn_b) {
  return agent_->CompareRuns(session_id, turn_a, turn_b);
}

}  // namespace kbench
