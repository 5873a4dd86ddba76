// WaitForJob: follows a job until it is done, through WatchJob, falling
// back to polling GetJob every 200 ms when the stream breaks (for example
// while kbd restarts). The stream's DONE message carries the finished job
// in full, so it is the answer; nothing is fetched again.
//
// Thread safety: a free function; it uses the client and the reporter from
// the calling thread only.
#ifndef KBENCH_CLIENT_JOB_WAITER_H_
#define KBENCH_CLIENT_JOB_WAITER_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/kbench_client.h"
#include "client/progress.h"
#include "kbench/v1/kbench.pb.h"

namespace kbench {

// Waits at most `timeout` for job `job_id` to reach STAGE_DONE, reporting
// each update to `progress` (may be null), and returns the finished job as
// GetJob returns it (with its full result): the stream's DONE message, or
// the DONE answer of the polling. Errors: the server's (e.g.
// NOT_FOUND for an unknown id, UNAVAILABLE when kbd cannot be reached at
// the start), or DEADLINE_EXCEEDED naming the job, its stage, and the
// commands to follow or cancel it; the job keeps running on the server.
absl::StatusOr<v1::Job> WaitForJob(KbenchClient& client,
                                   const std::string& job_id,
                                   absl::Duration timeout,
                                   ProgressReporter* progress);

}  // namespace kbench

#endif  // KBENCH_CLIENT_JOB_WAITER_H_
