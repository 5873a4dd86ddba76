// DashboardApi: the dashboard's read-only JSON API on kbd's HTTP server
// (docs/dashboard.md is the contract):
//
//   GET /api/problems?suite=S         ListProblemsResponse (suite optional)
//   GET /api/workers                  queue depth; connected workers with
//                                     busy_seconds and jobs_per_minute
//   GET /api/jobs?session=&stage=&page_size=&page_token=
//                                     ListJobsResponse (newest first)
//   GET /api/jobs/{id}                the job with its full result, and its
//                                     source
//   GET /api/sessions?limit=          sessions with best_speedup,
//                                     last_verdict and last_tool
//   GET /api/sessions/{id}            the session, its problem, its turns
//                                     with their jobs
//   GET /api/sessions/{id}/compare?a=&b=
//                                     CompareRunsResponse (not a turn)
//   GET /api/sources/{digest}         a kernel source
//   GET /api/sweeps/{id}              the Sweep (GetSweep's table)
//
// Each route is a thin translation onto JobService, SweepService,
// AgentService, the
// WorkerRegistry and the Scheduler: it parses the query strictly (400 with
// a message naming the parameter and what is allowed), calls the core, and
// writes protobuf JSON (proto field names, defaults printed, enums by name,
// int64 as strings). Errors are server/http/http_json.h's JSON errors with the
// core's status mapped by HttpStatusFor; other methods than GET get 405.
//
// Ownership: borrows the services, which must outlive the HTTP server the
// routes are installed on.
// Thread safety: thread safe (stateless; the services are thread safe).
#ifndef KBENCH_SERVER_HTTP_DASHBOARD_API_H_
#define KBENCH_SERVER_HTTP_DASHBOARD_API_H_

#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "server/core/agent_service.h"
#include "server/core/job_service.h"
#include "server/core/scheduler.h"
#include "server/core/sweep_service.h"
#include "server/core/worker_registry.h"

namespace httplib {
class Server;
struct Request;
}  // namespace httplib

namespace kbench {

class DashboardApi {
 public:
  DashboardApi(JobService* jobs, SweepService* sweeps, AgentService* agent,
               const WorkerRegistry* workers, const Scheduler* scheduler)
      : jobs_(jobs),
        sweeps_(sweeps),
        agent_(agent),
        workers_(workers),
        scheduler_(scheduler) {}

  // Registers the /api/* routes on `server` (before it starts).
  void Install(httplib::Server& server);

 private:
  absl::StatusOr<nlohmann::json> Problems(const httplib::Request& req);
  absl::StatusOr<nlohmann::json> Workers(const httplib::Request& req);
  absl::StatusOr<nlohmann::json> Jobs(const httplib::Request& req);
  absl::StatusOr<nlohmann::json> Job(const httplib::Request& req);
  absl::StatusOr<nlohmann::json> Sessions(const httplib::Request& req);
  absl::StatusOr<nlohmann::json> Session(const httplib::Request& req);
  absl::StatusOr<nlohmann::json> Compare(const httplib::Request& req);
  absl::StatusOr<nlohmann::json> Source(const httplib::Request& req);
  absl::StatusOr<nlohmann::json> Sweep(const httplib::Request& req);

  JobService* jobs_;
  SweepService* sweeps_;
  AgentService* agent_;
  const WorkerRegistry* workers_;
  const Scheduler* scheduler_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_HTTP_DASHBOARD_API_H_
