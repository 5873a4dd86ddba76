#include "server/grpc/worker_grpc_service.h"

#include <atomic>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "base/grpc/grpc_status.h"
#include "base/status_macros.h"
#include "base/untrusted_input.h"
#include "server/grpc/reactor_handle.h"
#include "spdlog/spdlog.h"

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
    absl::StatusOr<int64_t> waiter = scheduler_->RequestLease(
        request.worker(), wait,
        [handle, response](std::optional<Scheduler::Lease> lease) {
          handle->Finish(grpc::Status::OK, [&] {
            if (!lease) return;
            response->set_lease_id(lease->lease_id);
            *response->mutable_job() = std::move(lease->job);
            response->set_attempt(lease->attempt);
            response->set_lease_ttl_ms(
                static_cast<int>(absl::ToInt64Milliseconds(lease->ttl)));
            if (lease->gang.members_size() > 0) {
              *response->mutable_gang() = std::move(lease->gang);
            }
          });
        });
    if (!waiter.ok()) {
      // The worker's facts were refused (invalid, or its id is bound to
      // another GPU); no reply will come.
      handle_->Finish(ToGrpcStatus(waiter.status()));
      return;
    }
    waiter_ = *waiter;
  }

  void OnCancel() override {
    if (waiter_ != 0) scheduler_->CancelWait(waiter_);
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

grpc::ServerUnaryReactor* Done(grpc::CallbackServerContext* ctx,
                               const absl::Status& status) {
  grpc::ServerUnaryReactor* r = ctx->DefaultReactor();
  r->Finish(ToGrpcStatus(status));
  return r;
}

absl::Status CheckIds(const std::string& worker_id,
                      const std::string& lease_id) {
  RETURN_IF_ERROR(ValidateJobId(worker_id, "worker_id", ""));
  return ValidateJobId(lease_id, "lease_id",
                       "a lease id as LeaseJob returned it");
}

}  // namespace

absl::Status WorkerGrpcService::Authenticate(grpc::CallbackServerContext* ctx,
                                             const char* method) const {
  if (auth_ == nullptr) {
    return absl::InternalError(
        "kbd serves the worker API only with a worker token, and has none");
  }
  const auto& md = ctx->client_metadata();
  std::optional<absl::string_view> value;
  if (auto it = md.find(kAuthorizationKey); it != md.end()) {
    value = absl::string_view(it->second.data(), it->second.size());
  }
  absl::Status s = auth_->Check(value);
  if (!s.ok()) {
    // At most one line a second, so that a flood of bad calls cannot fill
    // the log; the count says how many were not logged.
    static std::atomic<int64_t> last_ms{0};
    static std::atomic<int64_t> quiet{0};
    const int64_t now = absl::ToUnixMillis(absl::Now());
    int64_t last = last_ms.load();
    if (now - last >= 1000 && last_ms.compare_exchange_strong(last, now)) {
      spdlog::warn(
          "WorkerService.{} from {} refused ({}); {} more refused "
          "since the last such line",
          method, ctx->peer(), absl::StatusCodeToString(s.code()),
          quiet.exchange(0));
    } else {
      ++quiet;
    }
  }
  return s;
}

grpc::ServerUnaryReactor* WorkerGrpcService::LeaseJob(
    grpc::CallbackServerContext* ctx, const v1::LeaseJobRequest* request,
    v1::LeaseJobResponse* response) {
  if (absl::Status s = Authenticate(ctx, "LeaseJob"); !s.ok()) {
    return Done(ctx, s);
  }
  return new LeaseReactor(scheduler_, *request, response);
}

grpc::ServerUnaryReactor* WorkerGrpcService::Heartbeat(
    grpc::CallbackServerContext* ctx, const v1::HeartbeatRequest* request,
    v1::HeartbeatResponse* response) {
  if (absl::Status s = Authenticate(ctx, "Heartbeat"); !s.ok()) {
    return Done(ctx, s);
  }
  if (absl::Status s = CheckIds(request->worker_id(), request->lease_id());
      !s.ok()) {
    return Done(ctx, s);
  }
  const Scheduler::HeartbeatReply reply = scheduler_->Heartbeat(
      request->worker_id(), request->lease_id(), request->stage_detail());
  response->set_lease_valid(reply.lease_valid);
  response->set_cancel(reply.cancel);
  return Done(ctx, absl::OkStatus());
}

grpc::ServerUnaryReactor* WorkerGrpcService::CompleteJob(
    grpc::CallbackServerContext* ctx, const v1::CompleteJobRequest* request,
    v1::CompleteJobResponse* response) {
  if (absl::Status s = Authenticate(ctx, "CompleteJob"); !s.ok()) {
    return Done(ctx, s);
  }
  if (absl::Status s = CheckIds(request->worker_id(), request->lease_id());
      !s.ok()) {
    return Done(ctx, s);
  }
  v1::JobResult result = request->result();
  result.set_worker_id(request->worker_id());
  return Done(ctx,
              scheduler_->Complete(request->worker_id(), request->lease_id(),
                                   std::move(result)));
}

}  // namespace kbench
