// GrpcHealthUpdater: sets grpc.health.v1's status from `health` every
// `period` until stopped (Stop, or the destructor), so that gRPC clients
// see what /healthz says.
//
// Ownership: borrows the server, which must outlive it.
// Thread safety: Stop and the destructor from one thread.
#ifndef KBENCH_SERVER_GRPC_GRPC_HEALTH_UPDATER_H_
#define KBENCH_SERVER_GRPC_GRPC_HEALTH_UPDATER_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <functional>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace kbench {

class GrpcHealthUpdater {
 public:
  GrpcHealthUpdater(grpc::Server* server, std::function<absl::Status()> health,
                    absl::Duration period = absl::Seconds(2))
      : thread_([this, server, period, health = std::move(health)] {
          absl::MutexLock lock(&mu_);
          do {
            mu_.Unlock();
            server->GetHealthCheckService()->SetServingStatus(health().ok());
            mu_.Lock();
          } while (!mu_.AwaitWithTimeout(absl::Condition(&stop_), period));
        }) {}
  ~GrpcHealthUpdater() { Stop(); }
  GrpcHealthUpdater(const GrpcHealthUpdater&) = delete;
  GrpcHealthUpdater& operator=(const GrpcHealthUpdater&) = delete;

  void Stop() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  absl::Mutex mu_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_GRPC_GRPC_HEALTH_UPDATER_H_
