// WorkerRegistry: the GPU workers kbd has heard from, with their GPU facts
// and what each is doing. A worker counts as connected while its last
// lease request or heartbeat is more recent than `liveness`. It also keeps
// each worker's usage: the time it spent busy (summed when a job ends, plus
// the running job so far) and when its recent jobs ended.
//
// Thread safety: every method is thread safe (one internal mutex).
#ifndef KBENCH_SERVER_WORKER_REGISTRY_H_
#define KBENCH_SERVER_WORKER_REGISTRY_H_

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "kbench/v1/kbench.pb.h"
#include "kbench/v1/worker.pb.h"

namespace kbench {

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

  // Records a lease request (carries the worker's full facts).
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
  // The GPU facts of the first connected worker, if any.
  std::optional<v1::GpuSpec> AnySpec(absl::Time now) const;
  // Connected workers with their usage at `now`, sorted by id.
  std::vector<WorkerStats> LiveStats(absl::Time now) const;
  // Every worker heard from since start (connected or not), with its usage
  // at `now`, sorted by id (for counters, which must not vanish).
  std::vector<WorkerStats> AllStats(absl::Time now) const;
  // When the last worker was heard from; InfinitePast if never.
  absl::Time LastSeen() const;

 private:
  struct Entry {
    v1::WorkerGpu gpu;
    absl::Time last_seen;
    absl::Time busy_since;         // Start of the current job, when busy.
    absl::Duration busy_total;     // Time busy with jobs that ended.
    std::deque<absl::Time> ended;  // When recent jobs ended, oldest first.
  };
  static WorkerStats StatsOf(const Entry& e, absl::Time now);

  Options options_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> workers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kbench

#endif  // KBENCH_SERVER_WORKER_REGISTRY_H_
