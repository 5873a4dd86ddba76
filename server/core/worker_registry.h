// WorkerRegistry: the GPU workers kbd has heard from, with their GPU facts
// and what each is doing. A worker counts as connected while its last
// lease request or heartbeat is more recent than `liveness`. It also keeps
// each worker's usage: the time it spent busy (summed when a job ends, plus
// the running job so far) and when its recent jobs ended.
//
// The facts come from the network, so Register checks them
// (ValidateWorkerInfo) and binds them to the worker id: while an id is
// connected it keeps the GPU it registered with. Device-limit checks use the
// strictest connected GPU of the job's arch (StrictestSpec), never one worker
// picked at random, so a worker that reports tiny limits cannot make other
// workers' kernels fail; ChooseArch picks the compile arch from the
// connected workers.
//
// Thread safety: every method is thread safe (one internal mutex).
#ifndef KBENCH_SERVER_CORE_WORKER_REGISTRY_H_
#define KBENCH_SERVER_CORE_WORKER_REGISTRY_H_

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "kbench/v1/kbench.pb.h"
#include "kbench/v1/worker.pb.h"
#include "server/core/worker_info_check.h"

namespace kbench {

// Connected workers by arch, for messages: "sm_90 (2 workers), sm_80 (1
// worker)", or "none".
std::string DescribeArchs(const std::map<std::string, int>& archs);

class WorkerRegistry {
 public:
  struct Options {
    // A worker not heard from for this long is considered gone. Workers
    // long-poll with waits well below it and heartbeat every second.
    absl::Duration liveness = absl::Seconds(45);
  };

  // A worker's facts with its usage.
  struct WorkerStats {
    v1::WorkerGpu gpu;
    // Seconds spent busy: every finished job's time from lease to end, plus
    // the running job's time so far.
    double busy_seconds = 0;
    // Jobs ended in the last kJobRateWindow, per minute.
    double jobs_per_minute = 0;
  };
  // The window of WorkerStats::jobs_per_minute.
  static constexpr absl::Duration kJobRateWindow = absl::Minutes(10);

  explicit WorkerRegistry(const Options& options) : options_(options) {}

  // Records a lease request (carries the worker's full facts) after
  // ValidateWorkerInfo. A connected id keeps its GPU: a request under it
  // with another GPU, host or GPU index is FailedPrecondition until the
  // first registration expires (the measured ceilings may change; they are
  // measured again when a worker's runner restarts). A new instance_id
  // takes the id over; an instance it replaced is AlreadyExists while the
  // id is connected, and may take it back once it is not (the last 16
  // replaced instances per id are remembered).
  absl::Status Register(const v1::WorkerInfo& info, absl::Time now);
  // Records the facts without any check (tests and trusted callers only;
  // the worker API goes through Register).
  void Touch(const v1::WorkerInfo& info, absl::Time now);
  // Records a heartbeat.
  void TouchId(const std::string& worker_id, absl::Time now);
  // The worker started `job_id`, or ("") finished its job, at `now`. Ending
  // a job (busy to idle, or to another job) adds its busy time; busy to idle
  // counts a job done.
  void SetCurrentJob(const std::string& worker_id, const std::string& job_id,
                     absl::Time now = absl::Now());

  // Connected workers, sorted by id.
  std::vector<v1::WorkerGpu> Live(absl::Time now) const;
  bool AnyLive(absl::Time now) const;
  // The GPU a worker registered with (connected or not).
  std::optional<v1::GpuSpec> SpecOf(const std::string& worker_id) const;
  // Connected workers per arch.
  std::map<std::string, int> LiveArchs(absl::Time now) const;
  // Connected workers of `arch` per host id, by GPU index, each with the
  // GPU indices it reaches with peer access (its WorkerInfo.links): what a
  // gang lease could span. Workers without a host id are left out; of two
  // ids on one GPU index, the first by id counts.
  std::map<std::string, std::map<int, std::set<int>>> LiveHostGpus(
      const std::string& arch, absl::Time now) const;
  // The strictest GPU among the connected workers of `arch`: each device
  // limit is the smallest one any of them reports (limits a worker does not
  // report are ignored), the rest comes from the first by id. nullopt when
  // none is connected.
  std::optional<v1::GpuSpec> StrictestSpec(const std::string& arch,
                                           absl::Time now) const;
  // The arch to compile a job for. With no worker connected: `requested`,
  // else `fallback`. Otherwise `requested` if a connected worker has it,
  // else (needs_gpu) FailedPrecondition naming the connected archs, or (a
  // compile-only job) `requested` anyway; an empty `requested` picks the
  // arch of the most connected workers.
  absl::StatusOr<std::string> ChooseArch(const std::string& requested,
                                         bool needs_gpu,
                                         const std::string& fallback,
                                         absl::Time now) const;
  // Connected workers with their usage at `now`, sorted by id.
  std::vector<WorkerStats> LiveStats(absl::Time now) const;
  // Every worker heard from since start (connected or not), with its usage
  // at `now`, sorted by id (for counters, which must not vanish).
  std::vector<WorkerStats> AllStats(absl::Time now) const;
  // When the last worker was heard from; InfinitePast if never.
  absl::Time LastSeen() const;
  // When the last worker of `arch` was heard from; InfinitePast if never.
  absl::Time LastSeenWithArch(const std::string& arch) const;

 private:
  struct Entry {
    v1::WorkerGpu gpu;
    absl::Time last_seen;
    absl::Time busy_since;         // Start of the current job, when busy.
    absl::Duration busy_total;     // Time busy with jobs that ended.
    std::deque<absl::Time> ended;  // When recent jobs ended, oldest first.
    std::string instance;          // The process now holding the id.
    // Instances it replaced, oldest first (at most kMaxSuperseded): each
    // is refused if it asks again.
    std::deque<std::string> superseded;
  };
  static constexpr size_t kMaxSuperseded = 16;
  static WorkerStats StatsOf(const Entry& e, absl::Time now);
  void RecordLocked(const v1::WorkerInfo& info, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Options options_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> workers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_WORKER_REGISTRY_H_
