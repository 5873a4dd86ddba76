// WorkerGrpcService: the gRPC front end of kbench.v1.WorkerService, used by
// kbworker: LeaseJob (a long-poll), Heartbeat and CompleteJob. It
// translates and calls the Scheduler; no logic of its own.
//
// Ownership: borrows the Scheduler (must outlive the server).
// Thread safety: stateless; gRPC calls it from many threads.
#ifndef KBENCH_SERVER_WORKER_GRPC_SERVICE_H_
#define KBENCH_SERVER_WORKER_GRPC_SERVICE_H_

#include "kbench/v1/worker.grpc.pb.h"
#include "server/scheduler.h"

namespace kbench {

class WorkerGrpcService final : public v1::WorkerService::CallbackService {
 public:
  explicit WorkerGrpcService(Scheduler* scheduler) : scheduler_(scheduler) {}

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
  Scheduler* scheduler_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_WORKER_GRPC_SERVICE_H_
