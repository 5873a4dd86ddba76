// HttpTaskQueue: the thread pool behind kbd's HTTP port (cpp-httplib
// 0.11.4), which httplib hands each accepted connection to. It is sized so
// that cheap requests (/healthz, /metrics, the dashboard, cached compiles)
// always find a thread while tool calls wait for their jobs (those are
// bounded below max_threads by HttpCallLimiter,
// server/http/http_call_limiter.h).
//
// It starts threads on demand up to max_threads (512 by default), reuses
// idle ones, and lets a thread that has been idle for idle_exit (10 s) exit,
// keeping min_threads. Past max_threads connections wait in a FIFO (never
// dropped: each one owns a socket). httplib's own ThreadPool is a fixed 8
// threads, which eight slow clients or eight tool calls took.
//
// Ownership: HttpServer owns it (shared with the forwarding queue that
// httplib creates and deletes through new_task_queue); it owns and joins
// its threads.
// Thread safety: thread safe.
#ifndef KBENCH_SERVER_HTTP_HTTP_TASK_QUEUE_H_
#define KBENCH_SERVER_HTTP_HTTP_TASK_QUEUE_H_

#include <httplib.h>

#include <deque>
#include <functional>
#include <list>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace kbench {

class HttpTaskQueue : public httplib::TaskQueue {
 public:
  struct Options {
    // Most threads at once; tasks beyond wait in a FIFO.
    int max_threads = 512;
    // Threads kept even when idle (spares for the next burst).
    int min_threads = 4;
    // An idle thread above min_threads exits after this long.
    absl::Duration idle_exit = absl::Seconds(10);
  };
  struct Stats {
    int threads = 0;       // alive now
    int busy = 0;          // running a task now
    int queued = 0;        // waiting for a thread
    int peak_threads = 0;  // most alive at once so far
  };

  explicit HttpTaskQueue(const Options& options);
  ~HttpTaskQueue() override;  // shutdown()

  void enqueue(std::function<void()> fn) override;
  // Runs the tasks already queued, then joins every thread. Idempotent.
  void shutdown() override;

  Stats stats() const;

 private:
  void Work(std::list<std::thread>::iterator self);
  void ReapLocked(std::vector<std::thread>* out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  std::list<std::thread> live_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> finished_ ABSL_GUARDED_BY(mu_);
  int threads_ ABSL_GUARDED_BY(mu_) = 0;
  int idle_ ABSL_GUARDED_BY(mu_) = 0;  // waiting for a task
  int busy_ ABSL_GUARDED_BY(mu_) = 0;  // running one
  int peak_ ABSL_GUARDED_BY(mu_) = 0;
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_HTTP_HTTP_TASK_QUEUE_H_
