// Retention: keeps the store bounded. Runs Store::Prune (implemented in
// retention.cc too) once when started and then every Options::interval on a
// background thread: finished jobs, session turns, unreferenced sources and
// compile-cache entries older than the policy's age, or beyond its size,
// are deleted oldest first; sessions' summary rows and unfinished jobs are
// kept (see Store::RetentionPolicy).
//
// Ownership: borrows the Store (must outlive it); owns its thread, joined by
// Stop() or the destructor.
// Thread safety: every method is thread safe.
#ifndef KBENCH_SERVER_STORE_RETENTION_H_
#define KBENCH_SERVER_STORE_RETENTION_H_

#include <cstdint>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/metrics.h"
#include "server/store/store.h"

namespace kbench {

class Retention {
 public:
  struct Options {
    // What is deleted; see Store::RetentionPolicy.
    Store::RetentionPolicy policy;
    // Time between two runs.
    absl::Duration interval = absl::Minutes(10);
  };

  Retention(const Options& options, Store* store);
  ~Retention();  // Calls Stop().
  Retention(const Retention&) = delete;
  Retention& operator=(const Retention&) = delete;

  // Whether `policy` limits anything (an age or a size).
  static bool Limits(const Store::RetentionPolicy& policy);

  // Starts the thread, which prunes at once and then every interval. Does
  // nothing when the policy limits nothing, or when already started.
  void Start();
  // Stops and joins the thread (a prune under way finishes its batch).
  // Idempotent.
  void Stop();

  // Prunes once, now, on the calling thread, and logs what it deleted.
  absl::StatusOr<Store::PruneStats> RunOnce(absl::Time now);

  // Runs completed (by the thread or RunOnce).
  int64_t runs() const;

 private:
  void Loop();

  const Options options_;
  Store* store_;
  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t runs_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

// Adds the store's counters to `metrics` (kbench_store_unreadable_rows_total,
// kbench_store_refused_writes_total, kbench_store_pruned_rows_total{table},
// kbench_store_used_bytes). `store` must outlive the last scrape.
absl::Status RegisterStoreMetrics(Metrics* metrics, Store* store);

}  // namespace kbench

#endif  // KBENCH_SERVER_STORE_RETENTION_H_
