#include "server/worker_grpc_service.h"

#include <memory>

#include "common/grpc_status.h"
#include "server/reactor_handle.h"

namespace kbench {
namespace {

// The long-poll: answers when the scheduler hands over a job or the wait
// runs out. A worker that hangs up is forgotten.
class LeaseReactor : public grpc::ServerUnaryReactor {
 public:
  LeaseReactor(Scheduler* scheduler, const v1::LeaseJobRequest& request,
               v1::LeaseJobResponse* response)
      : scheduler_(scheduler), handle_(std::make_shared<Handle>(this)) {
    std::shared_ptr<Handle> handle = handle_;
    const absl::Duration wait =
        absl::Milliseconds(std::max(0, request.wait_ms()));
    waiter_ = scheduler_->RequestLease(
        request.worker(), wait,
        [handle, response](std::optional<Scheduler::Lease> lease) {
          handle->Finish(grpc::Status::OK, [&] {
            if (!lease) return;
            response->set_lease_id(lease->lease_id);
            *response->mutable_job() = std::move(lease->job);
            response->set_attempt(lease->attempt);
            response->set_lease_ttl_ms(
                static_cast<int>(absl::ToInt64Milliseconds(lease->ttl)));
          });
        });
  }

  void OnCancel() override {
    scheduler_->CancelWait(waiter_);
    handle_->Finish(
        grpc::Status(grpc::StatusCode::CANCELLED, "lease wait cancelled"));
  }

  void OnDone() override {
    handle_->Detach();
    delete this;
  }

 private:
  using Handle = ReactorHandle<LeaseReactor>;
  Scheduler* scheduler_;
  std::shared_ptr<Handle> handle_;
  int64_t waiter_ = 0;
};

}  // namespace

grpc::ServerUnaryReactor* WorkerGrpcService::LeaseJob(
    grpc::CallbackServerContext* ctx, const v1::LeaseJobRequest* request,
    v1::LeaseJobResponse* response) {
  if (request->worker().worker_id().empty()) {
    grpc::ServerUnaryReactor* r = ctx->DefaultReactor();
    r->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                           "worker.worker_id is required"));
    return r;
  }
  return new LeaseReactor(scheduler_, *request, response);
}

grpc::ServerUnaryReactor* WorkerGrpcService::Heartbeat(
    grpc::CallbackServerContext* ctx, const v1::HeartbeatRequest* request,
    v1::HeartbeatResponse* response) {
  const Scheduler::HeartbeatReply reply = scheduler_->Heartbeat(
      request->worker_id(), request->lease_id(), request->stage_detail());
  response->set_lease_valid(reply.lease_valid);
  response->set_cancel(reply.cancel);
  grpc::ServerUnaryReactor* r = ctx->DefaultReactor();
  r->Finish(grpc::Status::OK);
  return r;
}

grpc::ServerUnaryReactor* WorkerGrpcService::CompleteJob(
    grpc::CallbackServerContext* ctx, const v1::CompleteJobRequest* request,
    v1::CompleteJobResponse* response) {
  v1::JobResult result = request->result();
  result.set_worker_id(request->worker_id());
  const absl::Status s = scheduler_->Complete(
      request->worker_id(), request->lease_id(), std::move(result));
  grpc::ServerUnaryReactor* r = ctx->DefaultReactor();
  r->Finish(ToGrpcStatus(s));
  return r;
}

}  // namespace kbench
