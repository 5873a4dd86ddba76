#include "client/job_waiter.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/units.h"
#include "contract/names.h"

namespace kbench {
namespace {

constexpr absl::Duration kPollInterval = absl::Milliseconds(200);
// Longest single GetJob while polling; it waits for the server to be back.
constexpr absl::Duration kPollCallTimeout = absl::Seconds(5);

absl::Status StillRunning(const std::string& job_id, const v1::Job* last,
                          absl::Duration timeout) {
  const std::string state =
      last != nullptr ? absl::StrCat("is still ", StageName(last->stage()))
                      : std::string("did not finish");
  return absl::DeadlineExceededError(absl::StrCat(
      "job ", job_id, " ", state, " after ",
      FormatDuration(absl::ToDoubleMicroseconds(timeout)),
      " (--timeout); it keeps running on the server: follow it with `kbctl "
      "watch ",
      job_id, "`, read it with `kbctl status ", job_id,
      "`, or stop it with `kbctl cancel ", job_id, "`"));
}

// Errors that polling cannot cure.
bool IsFinal(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
      return true;
    default:
      return false;
  }
}

}  // namespace

absl::StatusOr<v1::Job> WaitForJob(KbenchClient& client,
                                   const std::string& job_id,
                                   absl::Duration timeout,
                                   ProgressReporter* progress) {
  const absl::Time deadline = absl::Now() + timeout;
  v1::Job last;
  bool have = false;
  auto on_update = [&](const v1::Job& job) {
    last = job;
    have = true;
    if (progress != nullptr) progress->Update(job);
  };
  v1::GetJobRequest get;
  get.set_job_id(job_id);

  v1::WatchJobRequest watch;
  watch.set_job_id(job_id);
  const absl::Status stream = client.WatchJob(watch, deadline, on_update);
  if (!have || last.stage() != v1::STAGE_DONE) {
    if (absl::Now() >= deadline) {
      return StillRunning(job_id, have ? &last : nullptr, timeout);
    }
    if (IsFinal(stream.code())) return stream;
    if (!have) {
      // The stream gave nothing: is the server there at all? A failure
      // here (unreachable, unknown job) is the answer.
      absl::StatusOr<v1::GetJobResponse> first = client.GetJob(get);
      if (!first.ok()) return first.status();
      on_update(first->job());
    }
    if (!stream.ok() && progress != nullptr) {
      progress->Note(
          absl::StrCat("kbctl: the watch stream of job ", job_id, " broke (",
                       StatusCodeName(static_cast<int>(stream.code())), ": ",
                       stream.message(), "); polling every 200 ms"));
    }
    while (last.stage() != v1::STAGE_DONE) {
      absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) {
        return StillRunning(job_id, &last, timeout);
      }
      absl::SleepFor(std::min(kPollInterval, left));
      left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) continue;
      KbenchCallOptions options;
      options.wait_for_ready = true;
      options.timeout = std::min(kPollCallTimeout, left);
      absl::StatusOr<v1::GetJobResponse> polled = client.GetJob(get, options);
      if (polled.ok()) {
        on_update(polled->job());
      } else if (IsFinal(polled.status().code())) {
        return polled.status();
      }
      // Otherwise (UNAVAILABLE, DEADLINE_EXCEEDED, ...): the server may be
      // restarting; keep polling until the deadline.
    }
  }
  // The DONE message of the stream is the whole job as GetJob returns it
  // (kbd's job table hands its watchers the job it stores, result and
  // all), and polling ends on GetJob's own answer: no second fetch.
  return last;
}

}  // namespace kbench
