// WorkerGrpcService: the gRPC front end of kbench.v1.WorkerService, used by
// kbworker: LeaseJob (a long-poll), Heartbeat and CompleteJob. Every call
// must carry the worker token (`authorization: Bearer <token>` metadata,
// checked by a WorkerAuthenticator): a call without one is UNAUTHENTICATED,
// one with a wrong token PERMISSION_DENIED, before anything else is looked
// at. Otherwise it checks the ids it is given and calls the Scheduler.
//
// Ownership: borrows the Scheduler and the WorkerAuthenticator (both must
// outlive the server).
// Thread safety: stateless; gRPC calls it from many threads.
#ifndef KBENCH_SERVER_GRPC_WORKER_GRPC_SERVICE_H_
#define KBENCH_SERVER_GRPC_WORKER_GRPC_SERVICE_H_

#include "absl/status/status.h"
#include "contract/worker_auth.h"
#include "kbench/v1/worker.grpc.pb.h"
#include "server/core/scheduler.h"

namespace kbench {

class WorkerGrpcService final : public v1::WorkerService::CallbackService {
 public:
  // `auth` is required: kbd never serves the worker API without a token.
  WorkerGrpcService(Scheduler* scheduler, const WorkerAuthenticator* auth)
      : scheduler_(scheduler), auth_(auth) {}

  grpc::ServerUnaryReactor* LeaseJob(grpc::CallbackServerContext* ctx,
                                     const v1::LeaseJobRequest* request,
                                     v1::LeaseJobResponse* response) override;
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* ctx,
                                      const v1::HeartbeatRequest* request,
                                      v1::HeartbeatResponse* response) override;
  grpc::ServerUnaryReactor* CompleteJob(
      grpc::CallbackServerContext* ctx, const v1::CompleteJobRequest* request,
      v1::CompleteJobResponse* response) override;

 private:
  // The call's worker token, checked.
  absl::Status Authenticate(grpc::CallbackServerContext* ctx,
                            const char* method) const;

  Scheduler* scheduler_;
  const WorkerAuthenticator* auth_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_GRPC_WORKER_GRPC_SERVICE_H_
