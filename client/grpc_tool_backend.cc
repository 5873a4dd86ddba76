#include "client/grpc_tool_backend.h"

#include "client/job_waiter.h"

namespace kbench {

absl::StatusOr<v1::GetGpuSpecsResponse> GrpcToolBackend::GetGpuSpecs(
    const std::string& session_id) {
  v1::GetGpuSpecsRequest request;
  request.set_session_id(session_id);
  return client_->GetGpuSpecs(request);
}

absl::StatusOr<v1::GetProblemResponse> GrpcToolBackend::GetProblem(
    const std::string& name, const std::string& session_id) {
  v1::GetProblemRequest request;
  request.set_name(name);
  request.set_session_id(session_id);
  return client_->GetProblem(request);
}

absl::StatusOr<v1::ListProblemsResponse> GrpcToolBackend::ListProblems(
    const std::string& suite) {
  v1::ListProblemsRequest request;
  request.set_suite(suite);
  return client_->ListProblems(request);
}

absl::StatusOr<v1::Job> GrpcToolBackend::RunJob(
    v1::JobKind kind, const v1::KernelRequest& request) {
  v1::SubmitJobRequest submit;
  submit.set_kind(kind);
  *submit.mutable_kernel() = request;
  absl::StatusOr<v1::SubmitJobResponse> submitted = client_->SubmitJob(submit);
  if (!submitted.ok()) return submitted.status();
  return WaitForJob(*client_, submitted->job().id(), job_timeout_,
                    /*progress=*/nullptr);
}

absl::StatusOr<v1::CompareRunsResponse> GrpcToolBackend::CompareRuns(
    const std::string& session_id, int turn_a, int turn_b) {
  v1::CompareRunsRequest request;
  request.set_session_id(session_id);
  request.set_turn_a(turn_a);
  request.set_turn_b(turn_b);
  return client_->CompareRuns(request);
}

}  // namespace kbench
