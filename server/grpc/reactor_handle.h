// ReactorHandle: lets callbacks that arrive on any thread (a job finishing,
// a lease handed out) finish a gRPC callback reactor exactly once, and never
// after the reactor is done. The reactor owns a shared_ptr to its handle and
// calls Detach() in OnDone(); callbacks hold copies of the shared_ptr.
//
// Thread safety: every method is thread safe. Finish() is called outside the
// handle's lock, in case gRPC reacts inline; the reactor cannot be deleted
// before its Finish() (OnDone follows it).
#ifndef KBENCH_SERVER_GRPC_REACTOR_HANDLE_H_
#define KBENCH_SERVER_GRPC_REACTOR_HANDLE_H_

#include <grpcpp/support/status.h>

#include <functional>

#include "absl/synchronization/mutex.h"

namespace kbench {

template <typename Reactor>
class ReactorHandle {
 public:
  explicit ReactorHandle(Reactor* reactor) : reactor_(reactor) {}

  // Unless already finished or detached: runs `fill` (under the lock, e.g.
  // to write the response) and finishes the reactor with `status`. Returns
  // whether it finished it.
  bool Finish(const grpc::Status& status,
              const std::function<void()>& fill = nullptr) {
    Reactor* r = nullptr;
    {
      absl::MutexLock lock(&mu_);
      if (finished_ || reactor_ == nullptr) return false;
      finished_ = true;
      r = reactor_;
      if (fill) fill();
    }
    r->Finish(status);
    return true;
  }

  // Called from the reactor's OnDone(): later Finish() calls do nothing.
  void Detach() {
    absl::MutexLock lock(&mu_);
    reactor_ = nullptr;
  }

 private:
  absl::Mutex mu_;
  Reactor* reactor_;
  bool finished_ = false;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_GRPC_REACTOR_HANDLE_H_
