// KbenchGrpcService: the gRPC front end of kbench.v1.Kbench (callback API).
// It translates requests and responses and calls the core (JobService,
// SweepService, AgentService); it holds no logic of its own. Statuses are
// converted in one place (grpc_status.h).
//
// Ownership: borrows the services (they must outlive the server).
// Thread safety: gRPC calls it from many threads; it keeps no state.
#ifndef KBENCH_SERVER_GRPC_KBENCH_GRPC_SERVICE_H_
#define KBENCH_SERVER_GRPC_KBENCH_GRPC_SERVICE_H_

#include "kbench/v1/kbench.grpc.pb.h"
#include "server/core/agent_service.h"
#include "server/core/job_service.h"
#include "server/core/sweep_service.h"

namespace kbench {

class KbenchGrpcService final : public v1::Kbench::CallbackService {
 public:
  KbenchGrpcService(JobService* jobs, SweepService* sweeps, AgentService* agent)
      : jobs_(jobs), sweeps_(sweeps), agent_(agent) {}

  grpc::ServerUnaryReactor* GetGpuSpecs(
      grpc::CallbackServerContext* ctx, const v1::GetGpuSpecsRequest* request,
      v1::GetGpuSpecsResponse* response) override;
  grpc::ServerUnaryReactor* CompileKernel(
      grpc::CallbackServerContext* ctx, const v1::CompileKernelRequest* request,
      v1::CompileKernelResponse* response) override;
  grpc::ServerUnaryReactor* RunCorrectness(
      grpc::CallbackServerContext* ctx,
      const v1::RunCorrectnessRequest* request,
      v1::RunCorrectnessResponse* response) override;
  grpc::ServerUnaryReactor* ProfileKernel(
      grpc::CallbackServerContext* ctx, const v1::ProfileKernelRequest* request,
      v1::ProfileKernelResponse* response) override;
  grpc::ServerUnaryReactor* SubmitKernel(
      grpc::CallbackServerContext* ctx, const v1::SubmitKernelRequest* request,
      v1::SubmitKernelResponse* response) override;
  grpc::ServerUnaryReactor* SanitizeKernel(
      grpc::CallbackServerContext* ctx,
      const v1::SanitizeKernelRequest* request,
      v1::SanitizeKernelResponse* response) override;
  grpc::ServerUnaryReactor* ListProblems(
      grpc::CallbackServerContext* ctx, const v1::ListProblemsRequest* request,
      v1::ListProblemsResponse* response) override;
  grpc::ServerUnaryReactor* GetProblem(
      grpc::CallbackServerContext* ctx, const v1::GetProblemRequest* request,
      v1::GetProblemResponse* response) override;
  grpc::ServerUnaryReactor* CompareRuns(
      grpc::CallbackServerContext* ctx, const v1::CompareRunsRequest* request,
      v1::CompareRunsResponse* response) override;
  grpc::ServerUnaryReactor* CreateSession(
      grpc::CallbackServerContext* ctx, const v1::CreateSessionRequest* request,
      v1::CreateSessionResponse* response) override;
  grpc::ServerUnaryReactor* GetSession(
      grpc::CallbackServerContext* ctx, const v1::GetSessionRequest* request,
      v1::GetSessionResponse* response) override;
  grpc::ServerUnaryReactor* ListSessions(
      grpc::CallbackServerContext* ctx, const v1::ListSessionsRequest* request,
      v1::ListSessionsResponse* response) override;
  grpc::ServerUnaryReactor* CloseSession(
      grpc::CallbackServerContext* ctx, const v1::CloseSessionRequest* request,
      v1::CloseSessionResponse* response) override;

  grpc::ServerUnaryReactor* SubmitJob(grpc::CallbackServerContext* ctx,
                                      const v1::SubmitJobRequest* request,
                                      v1::SubmitJobResponse* response) override;
  grpc::ServerUnaryReactor* GetJob(grpc::CallbackServerContext* ctx,
                                   const v1::GetJobRequest* request,
                                   v1::GetJobResponse* response) override;
  grpc::ServerWriteReactor<v1::WatchJobResponse>* WatchJob(
      grpc::CallbackServerContext* ctx,
      const v1::WatchJobRequest* request) override;
  grpc::ServerUnaryReactor* ListJobs(grpc::CallbackServerContext* ctx,
                                     const v1::ListJobsRequest* request,
                                     v1::ListJobsResponse* response) override;
  grpc::ServerUnaryReactor* CancelJob(grpc::CallbackServerContext* ctx,
                                      const v1::CancelJobRequest* request,
                                      v1::CancelJobResponse* response) override;

  grpc::ServerUnaryReactor* SubmitSweep(
      grpc::CallbackServerContext* ctx, const v1::SubmitSweepRequest* request,
      v1::SubmitSweepResponse* response) override;
  grpc::ServerUnaryReactor* GetSweep(grpc::CallbackServerContext* ctx,
                                     const v1::GetSweepRequest* request,
                                     v1::GetSweepResponse* response) override;

 private:
  JobService* jobs_;
  SweepService* sweeps_;
  AgentService* agent_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_GRPC_KBENCH_GRPC_SERVICE_H_
