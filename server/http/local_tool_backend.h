// LocalToolBackend: the agent tools' backend inside kbd, for its HTTP
// front end: it calls the JobService and AgentService directly and blocks
// the calling (HTTP) thread until a job is done, its timeout passes, the
// caller's `cancelled` says the client has gone (RunJobUntil), or kbd
// shuts down; in the last three cases the job is cancelled.
//
// Ownership: borrows both services (must outlive it).
// Thread safety: thread safe; each call blocks only its own thread.
#ifndef KBENCH_SERVER_HTTP_LOCAL_TOOL_BACKEND_H_
#define KBENCH_SERVER_HTTP_LOCAL_TOOL_BACKEND_H_

#include <atomic>
#include <functional>
#include <string>

#include "absl/time/time.h"
#include "agent/agent_tools.h"
#include "server/core/agent_service.h"
#include "server/core/job_service.h"
#include "server/http/http_server.h"

namespace kbench {

class LocalToolBackend : public CancellableToolBackend {
 public:
  // `job_timeout`: longest wait for one job; the job is cancelled after it.
  LocalToolBackend(JobService* jobs, AgentService* agent,
                   absl::Duration job_timeout)
      : jobs_(jobs), agent_(agent), job_timeout_(job_timeout) {}

  absl::StatusOr<v1::GetGpuSpecsResponse> GetGpuSpecs(
      const std::string& session_id) override;
  absl::StatusOr<v1::GetProblemResponse> GetProblem(
      const std::string& name, const std::string& session_id) override;
  absl::StatusOr<v1::ListProblemsResponse> ListProblems(
      const std::string& suite) override {
    v1::ListProblemsRequest request;
    request.set_suite(suite);
    return jobs_->ListProblems(request);
  }
  absl::StatusOr<v1::Job> RunJob(v1::JobKind kind,
                                 const v1::KernelRequest& request) override {
    return RunJobUntil(kind, request, nullptr);
  }
  // Polls `cancelled` every 50 ms while the job runs.
  absl::StatusOr<v1::Job> RunJobUntil(
      v1::JobKind kind, const v1::KernelRequest& request,
      const std::function<bool()>& cancelled) override;
  absl::StatusOr<v1::CompareRunsResponse> CompareRuns(
      const std::string& session_id, int turn_a, int turn_b) override;

  // Ends the waits in progress (their jobs are cancelled, the calls answer
  // Unavailable) and refuses new jobs, so that the front end can stop
  // without waiting for jobs. Call before stopping the front end.
  void Shutdown() { stopping_ = true; }

 private:
  JobService* jobs_;
  AgentService* agent_;
  absl::Duration job_timeout_;
  std::atomic<bool> stopping_{false};
};

}  // namespace kbench

#endif  // KBENCH_SERVER_HTTP_LOCAL_TOOL_BACKEND_H_
