// JobTable: the live state of jobs. Unfinished jobs (and recently finished
// ones) are held in memory; every change of stage is written through to the
// Store, and stage-detail changes at most once a second. Watchers are told
// of every change, in order.
//
// Ownership: borrows the Store (must outlive it).
// Thread safety: every method is thread safe. Watchers are called with the
// table's lock held, in order of the changes: they must be quick, must not
// block and must not call back into the JobTable.
#ifndef KBENCH_SERVER_CORE_JOB_TABLE_H_
#define KBENCH_SERVER_CORE_JOB_TABLE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kbench/v1/kbench.pb.h"
#include "server/store/store.h"

namespace kbench {

class JobTable {
 public:
  using Watcher = std::function<void(const v1::Job&)>;

  struct Options {
    // How long finished jobs stay in memory for late watchers and readers
    // (after that they are read from the store).
    absl::Duration done_retention = absl::Minutes(5);
    // Least time between two writes of stage_detail-only changes.
    absl::Duration detail_write_interval = absl::Seconds(1);
  };

  JobTable(const Options& options, Store* store)
      : options_(options), store_(store) {}

  // Adds a new job (persisted with its request). AlreadyExists on a
  // duplicate id.
  absl::Status Insert(const v1::Job& job, const v1::KernelRequest& request);

  // Re-adds an unfinished job loaded from the store (recovery at start).
  void Adopt(const v1::Job& job);

  // Applies `mutate` to a live, unfinished job, stamps updated_unix_ms,
  // persists and notifies watchers. NotFound for an unknown job;
  // FailedPrecondition when it is already DONE (a finished job never
  // changes).
  absl::StatusOr<v1::Job> Update(const std::string& id,
                                 const std::function<void(v1::Job*)>& mutate);

  // The job, from memory or the store.
  absl::StatusOr<v1::Job> Get(const std::string& id);

  // Calls `watcher` with the current job, then on every change until the
  // job is DONE (the DONE state is the last call). Returns a token for
  // Unwatch, or 0 when there is nothing to follow: the job was already DONE,
  // or it is only in the store (one call, no subscription). NotFound for an
  // unknown job.
  absl::StatusOr<int64_t> Watch(const std::string& id, Watcher watcher);
  void Unwatch(const std::string& id, int64_t token);

  // Drops finished jobs older than the retention from memory.
  void Evict(absl::Time now);

  // Unfinished jobs in memory, in creation order.
  std::vector<v1::Job> Unfinished() const;

 private:
  struct Entry {
    v1::Job job;
    std::map<int64_t, Watcher> watchers;
    absl::Time last_write = absl::InfinitePast();
  };

  Options options_;
  Store* store_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> jobs_ ABSL_GUARDED_BY(mu_);
  int64_t next_token_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_JOB_TABLE_H_
