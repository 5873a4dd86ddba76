// Scheduler: the queue of compiled jobs waiting for a GPU, and the leases
// that workers hold on them (the pull model of Bazel remote execution).
//  - Workers long-poll Lease(); a waiting worker gets the next job compiled
//    for its GPU's arch (RunnerJob.cubin_arch == spec.arch) at once.
//  - Each GPU worker holds at most one lease, so timed GPU work is
//    serialized per GPU by construction. A multi-GPU job
//    (RunnerJob.world_size R > 1) is leased as a gang: one lease held by R
//    workers of one host, granted when R of them wait together
//    (server/core/idle_pool.h says which, and how a waiting gang holds a
//    host so that one-GPU jobs cannot starve it). The leader (lowest GPU
//    index) runs and completes it; the other members are parked and only
//    heartbeat. The lease is lost when any member's heartbeats stop or any
//    member restarts. A lease request from a worker id
//    that still holds a lease means the worker restarted and lost its job:
//    the job is given up at once (re-queued), not after the TTL.
//  - A lease whose heartbeats stop for lease_ttl is lost: the job goes back
//    to the front of the queue, up to max_attempts leases in all; then it
//    fails with UNAVAILABLE, naming the workers that lost it.
//  - Jobs waiting while no worker of their arch has been seen for
//    no_worker_timeout fail with UNAVAILABLE instead of waiting forever.
//  - A completed result is checked (server/core/result_check.h) before it ends
//    the job; an inconsistent one ends it with INTERNAL, never stored as the
//    kernel's verdict.
// A background thread ticks the timeouts.
//
// Ownership: borrows the JobTable and WorkerRegistry (must outlive it).
// Thread safety: every method is thread safe. Callbacks (lease replies,
// `finish`) are called without the scheduler's lock held. Lock order: the
// scheduler's, then the WorkerRegistry's.
#ifndef KBENCH_SERVER_CORE_SCHEDULER_H_
#define KBENCH_SERVER_CORE_SCHEDULER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kbench/v1/worker.pb.h"
#include "server/core/idle_pool.h"
#include "server/core/job_table.h"
#include "server/core/worker_registry.h"

namespace kbench {

class Scheduler {
 public:
  struct Options {
    // A lease is lost when no heartbeat arrives for this long.
    absl::Duration lease_ttl = absl::Seconds(10);
    // Leases a job may be given before it fails.
    int max_attempts = 3;
    // Longest long-poll; longer requested waits are cut to this.
    absl::Duration max_wait = absl::Seconds(30);
    // Queued jobs fail after waiting this long with no worker connected.
    absl::Duration no_worker_timeout = absl::Seconds(60);
    // Period of the timeout checks.
    absl::Duration tick = absl::Milliseconds(100);
  };

  struct Lease {
    std::string lease_id;
    v1::RunnerJob job;  // A parked member's: job_id and world_size only.
    int attempt = 0;
    absl::Duration ttl;
    v1::GangLease gang;  // Empty for a one-GPU job.
  };
  // Called once: with a lease, or with nullopt when the wait ran out.
  using LeaseReply = std::function<void(std::optional<Lease>)>;
  // Called once per job the scheduler ends: completed by its worker, lost
  // too often, or no worker. (A job cancelled while leased is finished by
  // its canceller; its worker's later Complete is accepted and dropped.)
  using FinishFn =
      std::function<void(const std::string& job_id, v1::JobResult result)>;

  Scheduler(const Options& options, JobTable* jobs, WorkerRegistry* workers,
            FinishFn finish);
  ~Scheduler();

  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Queues a compiled job (stage becomes WAITING_GPU).
  void Enqueue(const std::string& job_id, v1::RunnerJob job, int attempts);

  // Long-poll for a job. Registers the worker first
  // (WorkerRegistry::Register: InvalidArgument or FailedPrecondition, and
  // then `reply` is never called). Gives up any lease the worker id still
  // holds, and any older wait of it. Returns a waiter id for CancelWait.
  absl::StatusOr<int64_t> RequestLease(const v1::WorkerInfo& worker,
                                       absl::Duration wait, LeaseReply reply);
  // The caller went away: forget the waiter (its reply is not called). If a
  // job was already handed to it, the lease expires and is re-queued.
  void CancelWait(int64_t waiter_id);

  struct HeartbeatReply {
    bool lease_valid = false;
    bool cancel = false;
  };
  HeartbeatReply Heartbeat(const std::string& worker_id,
                           const std::string& lease_id,
                           const std::string& detail);

  // The worker's result. FailedPrecondition when the lease is unknown or
  // lost (its job went elsewhere or ended), or the worker is a parked
  // member of it (only the leader completes a gang lease). InvalidArgument when
  // the result fails CheckWorkerResult: the job then ends with an INTERNAL
  // error saying so (the worker's verdict is dropped).
  absl::Status Complete(const std::string& worker_id,
                        const std::string& lease_id, v1::JobResult result);

  // Removes a queued job, or flags a leased one so its worker stops it.
  // Returns false when the scheduler does not hold the job.
  bool Cancel(const std::string& job_id);

  // Jobs waiting for a GPU.
  int QueueDepth() const;

 private:
  struct Queued {
    std::string job_id;
    v1::RunnerJob job;
    int attempts = 0;  // Leases given so far.
    // When it was queued (or re-queued). For a gang, moved on while some
    // connected host could take it: the no-worker timeout counts from when
    // none could.
    absl::Time since;
    // How each earlier lease was lost ("w1 stopped heartbeating (10s)").
    std::vector<std::string> losses;
    // Of those, the leases lost because their worker restarted mid-job.
    int restarts = 0;
    // What the job's stage shows now (UpdatePositionsLocked writes only
    // changes); cleared when the job is leased.
    int shown_position = 0;
    std::string shown_detail;
  };
  // A parked member of a gang lease.
  struct Parked {
    std::string worker_id;
    absl::Time last_heartbeat;
  };
  struct Active {
    Queued queued;
    std::string worker_id;  // The leader, for a gang.
    absl::Time last_heartbeat;
    bool cancelled = false;
    std::vector<Parked> parked;  // Empty for a one-GPU job.
    // Whether `worker_id` holds this lease, as its leader or parked.
    bool HeldBy(const std::string& worker_id) const;
  };
  struct Waiter {
    v1::WorkerInfo worker;
    absl::Time deadline;
    LeaseReply reply;
  };
  using Calls = std::vector<std::function<void()>>;

  void Tick();
  // Hands queued jobs to waiting workers; collects the replies in `calls`.
  void MatchLocked(Calls* calls) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Leases `q` to `members` (one, or a gang by rank) and moves their
  // waiters' replies into `calls`.
  void StartLeaseLocked(Queued q, std::vector<Waiter> members, Calls* calls)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Why a queued gang job waits, for its stage detail; `hosts`: the
  // connected workers of its arch per host (WorkerRegistry::LiveHostGpus).
  static std::string GangWaitDetail(
      const Queued& q, const std::map<std::string, HostGpus>& hosts);
  // A lease whose leader or parked member has not heartbeated for
  // lease_ttl at `now`: which one, and for how long. Empty when none.
  std::string StaleMember(const Active& a, absl::Time now) const;
  // Sets each queued job's position and stage detail where they changed.
  void UpdatePositionsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Fails (into `failed`) the queued jobs no connected worker can serve
  // and none has for no_worker_timeout: no worker of their arch, or for a
  // gang no host with enough of them that all reach each other.
  using Failed = std::vector<std::pair<std::string, v1::JobResult>>;
  void FailUnservableLocked(absl::Time now, Failed* failed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ends the lease `it` (its worker lost it, as `how` says; `restarted` when
  // the worker came back without its job): re-queues the job at the front,
  // or fails it into `failed` after max_attempts. Returns the next lease.
  std::map<std::string, Active>::iterator LoseLeaseLocked(
      std::map<std::string, Active>::iterator it, const std::string& how,
      bool restarted, Failed* failed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Options options_;
  JobTable* jobs_;
  WorkerRegistry* workers_;
  FinishFn finish_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, Waiter> waiters_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Active> leases_ ABSL_GUARDED_BY(mu_);
  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::thread ticker_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_SCHEDULER_H_
