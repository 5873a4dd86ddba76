// JobTable: the live state of jobs. Unfinished jobs (and recently finished
// ones) are held in memory; every change of stage is written through to the
// Store, and stage-detail changes at most once a second. A job ends through
// Finish, which writes it with its session's turn in one transaction.
// Watchers are told of every change, in order.
//
// Ownership: borrows the Store (must outlive it).
// Thread safety: every method is thread safe. Store writes happen under the
// table's lock (so a job's rows are written in the order of its changes);
// watchers are called without it, one change at a time per job, in order,
// from the thread that made the change or from one making a concurrent
// change of the same job. So a watcher may call back into the JobTable, but
// must be quick and must not block. A watcher removed by Unwatch while a
// change is being delivered may still be called with that change: what it
// captures must outlive that (hold it by shared_ptr).
#ifndef KBENCH_SERVER_CORE_JOB_TABLE_H_
#define KBENCH_SERVER_CORE_JOB_TABLE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

  // Room for jobs not yet inserted, so that a job, or a batch of them (a
  // sweep), gets in whole or not at all: Insert with it uses one slot, and
  // what is left is given back when it is destroyed. Movable; it must not
  // outlive its table.
  class Reservation {
   public:
    Reservation() = default;
    Reservation(Reservation&& other) noexcept { *this = std::move(other); }
    Reservation& operator=(Reservation&& other) noexcept;
    Reservation(const Reservation&) = delete;
    Reservation& operator=(const Reservation&) = delete;
    ~Reservation() { Release(); }
    int left() const { return left_; }

   private:
    friend class JobTable;
    Reservation(JobTable* table, int n) : table_(table), left_(n) {}
    void Release();
    JobTable* table_ = nullptr;
    int left_ = 0;
  };
  // Reserves room for `n` jobs: ResourceExhausted ("N unfinished jobs")
  // when the unfinished jobs, the room reserved and `n` would be more than
  // `max_unfinished`.
  absl::StatusOr<Reservation> Reserve(int n, int max_unfinished);

  // Adds a new job (persisted with its request), using a slot of `room`
  // when given (FailedPrecondition when it has none left). AlreadyExists
  // on a duplicate id; the slot is kept on any error.
  absl::Status Insert(const v1::Job& job, const v1::KernelRequest& request,
                      Reservation* room = nullptr);

  // Re-adds an unfinished job loaded from the store (recovery at start).
  void Adopt(const v1::Job& job);

  // Applies `mutate` to a live, unfinished job, stamps updated_unix_ms,
  // persists and notifies watchers. NotFound for an unknown job;
  // FailedPrecondition when it is already DONE (a finished job never
  // changes).
  absl::StatusOr<v1::Job> Update(const std::string& id,
                                 const std::function<void(v1::Job*)>& mutate);

  // What a finished job adds to its session; nullopt for none.
  using TurnFn =
      std::function<std::optional<Store::SessionTurn>(const v1::Job&)>;
  // Ends a live job: applies `mutate`, sets stage DONE (and the finish
  // time if unset), and writes the job with the turn `turn_of` builds from
  // the finished job, in one store transaction (Store::FinishJob), before
  // any watcher sees it DONE. Errors as Update; a failed write is logged
  // and the job is still DONE in memory (the store keeps it unfinished,
  // so a restarted kbd runs it again).
  absl::StatusOr<v1::Job> Finish(const std::string& id,
                                 const std::function<void(v1::Job*)>& mutate,
                                 const TurnFn& turn_of);

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
  // How many there are (without copying them).
  int UnfinishedCount() const;
  // Room reserved and not yet used.
  int reserved() const;

 private:
  // A job's watchers and the changes not yet delivered to them (guarded by
  // the table's mu_). Shared, so that a delivery outlives the entry's
  // eviction.
  struct Channel {
    struct Change {
      v1::Job job;
      int64_t version = 0;
      int64_t only_token = 0;  // A watcher's first call: to it alone.
    };
    std::map<int64_t, Watcher> watchers;
    // Per watcher token, the version its first call showed: older changes
    // are not delivered to it.
    std::map<int64_t, int64_t> since;
    std::deque<Change> pending;
    bool delivering = false;
  };
  struct Entry {
    v1::Job job;
    int64_t version = 0;  // Bumped by each change.
    std::shared_ptr<Channel> channel = std::make_shared<Channel>();
    absl::Time last_write = absl::InfinitePast();
  };

  // Applies `mutate` to the live job `id` and queues the change for its
  // watchers; `persist` writes it. Returns the job and its channel.
  absl::StatusOr<std::pair<v1::Job, std::shared_ptr<Channel>>> Apply(
      const std::string& id, const std::function<void(v1::Job*)>& mutate,
      const TurnFn* turn_of);
  // Delivers `channel`'s pending changes unless another thread is.
  void Deliver(const std::shared_ptr<Channel>& channel);

  Options options_;
  Store* store_;
  mutable absl::Mutex mu_;
  int UnfinishedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::map<std::string, Entry> jobs_ ABSL_GUARDED_BY(mu_);
  int reserved_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t next_token_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_JOB_TABLE_H_
