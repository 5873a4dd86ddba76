// A wait the integration tests share: until kbd has a number of GPU workers
// connected (its GetGpuSpecs lists them), polled every 50 ms.
//
// Thread safety: a test's thread.
#ifndef KBENCH_TESTS_INTEGRATION_KBD_WAITS_H_
#define KBENCH_TESTS_INTEGRATION_KBD_WAITS_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "kbench/v1/kbench.grpc.pb.h"

namespace kbench::testing {

// True once at least `n` GPU workers are connected, false after `timeout`.
// `context` makes each call's context (credentials, a deadline); by default
// a plain one.
inline bool WaitForGpus(
    v1::Kbench::Stub* stub, int n, absl::Duration timeout,
    const std::function<std::unique_ptr<grpc::ClientContext>()>& context =
        nullptr) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    std::unique_ptr<grpc::ClientContext> ctx =
        context ? context() : std::make_unique<grpc::ClientContext>();
    v1::GetGpuSpecsResponse resp;
    if (stub->GetGpuSpecs(ctx.get(), v1::GetGpuSpecsRequest(), &resp).ok() &&
        resp.gpus_size() >= n) {
      return true;
    }
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(50));
  }
}

}  // namespace kbench::testing

#endif  // KBENCH_TESTS_INTEGRATION_KBD_WAITS_H_
