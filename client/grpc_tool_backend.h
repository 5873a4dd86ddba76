// GrpcToolBackend: the agent tools' backend over gRPC, for `kbctl mcp` and
// other clients. Jobs go through the job API (SubmitJob, then WatchJob), so
// a job that ends in a compile error or a rejection still returns its full
// report.
//
// Ownership: borrows the client (must outlive it).
// Thread safety: as the client (its methods may run concurrently).
#ifndef KBENCH_CLIENT_GRPC_TOOL_BACKEND_H_
#define KBENCH_CLIENT_GRPC_TOOL_BACKEND_H_

#include <string>

#include "absl/time/time.h"
#include "agent/agent_tools.h"
#include "client/kbench_client.h"

namespace kbench {

class GrpcToolBackend : public AgentToolBackend {
 public:
  // `job_timeout`: longest wait for one job.
  GrpcToolBackend(KbenchClient* client, absl::Duration job_timeout)
      : client_(client), job_timeout_(job_timeout) {}

  absl::StatusOr<v1::GetGpuSpecsResponse> GetGpuSpecs(
      const std::string& session_id) override;
  absl::StatusOr<v1::GetProblemResponse> GetProblem(
      const std::string& name, const std::string& session_id) override;
  absl::StatusOr<v1::ListProblemsResponse> ListProblems(
      const std::string& suite) override;
  absl::StatusOr<v1::Job> RunJob(v1::JobKind kind,
                                 const v1::KernelRequest& request) override;
  absl::StatusOr<v1::CompareRunsResponse> CompareRuns(
      const std::string& session_id, int turn_a, int turn_b) override;

 private:
  KbenchClient* client_;
  absl::Duration job_timeout_;
};

}  // namespace kbench

#endif  // KBENCH_CLIENT_GRPC_TOOL_BACKEND_H_
