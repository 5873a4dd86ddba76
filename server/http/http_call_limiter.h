// HttpCallLimiter: admission of the HTTP tool calls that hold their thread
// until a job ends: at most max_gpu_calls (256) GPU calls, max_compile_calls
// (128) compiles and max_calls_per_session (16) of either per session at
// once; past that a call is refused at once (HTTP 429 with Retry-After)
// rather than holding a thread. With the defaults, of the task queue's 512
// threads (server/http/http_task_queue.h) 512 - 256 - 128 = 128 are always left
// for cheap requests and connections being read.
//
// Ownership: HttpServer owns it; a Permit borrows it and must be destroyed
// before it.
// Thread safety: thread safe.
#ifndef KBENCH_SERVER_HTTP_HTTP_CALL_LIMITER_H_
#define KBENCH_SERVER_HTTP_HTTP_CALL_LIMITER_H_

#include <map>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace kbench {

class HttpCallLimiter {
 public:
  struct Options {
    // GPU tool calls (correctness, profile, submit, sanitize) in flight.
    int max_gpu_calls = 256;
    // compile_kernel calls in flight.
    int max_compile_calls = 128;
    // Calls of either kind in flight for one session (calls without a
    // session are bounded by the totals only).
    int max_calls_per_session = 16;
  };

  // Holds a slot until destroyed.
  class Permit {
   public:
    Permit() = default;
    Permit(Permit&& other) noexcept { *this = std::move(other); }
    Permit& operator=(Permit&& other) noexcept;
    ~Permit();

   private:
    friend class HttpCallLimiter;
    HttpCallLimiter* limiter_ = nullptr;
    bool gpu_ = false;
    std::string session_;
  };

  explicit HttpCallLimiter(const Options& options) : options_(options) {}

  // ResourceExhausted (saying which bound, and to retry) when the call
  // would pass a bound.
  absl::StatusOr<Permit> Acquire(bool gpu, const std::string& session);

  int gpu_calls() const;
  int compile_calls() const;

 private:
  void Release(bool gpu, const std::string& session);

  const Options options_;
  mutable absl::Mutex mu_;
  int gpu_ ABSL_GUARDED_BY(mu_) = 0;
  int compile_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, int> per_session_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kbench

#endif  // KBENCH_SERVER_HTTP_HTTP_CALL_LIMITER_H_
