// WorkerRegistry: the GPU workers kbd has heard from, with their GPU facts
// and what each is doing. A worker counts as connected while its last
// lease request or heartbeat is more recent than `liveness`.
//
// Thread safety: every method is thread safe (one internal mutex).
#ifndef KBENCH_SERVER_WORKER_REGISTRY_H_
#define KBENCH_SERVER_WORKER_REGISTRY_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
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

  explicit WorkerRegistry(const Options& options) : options_(options) {}

  // Records a lease request (carries the worker's full facts).
  void Touch(const v1::WorkerInfo& info, absl::Time now);
  // Records a heartbeat.
  void TouchId(const std::string& worker_id, absl::Time now);
  // The worker started `job_id`, or ("" ) finished its job.
  void SetCurrentJob(const std::string& worker_id, const std::string& job_id);

  // Connected workers, sorted by id.
  std::vector<v1::WorkerGpu> Live(absl::Time now) const;
  bool AnyLive(absl::Time now) const;
  // The GPU facts of the first connected worker, if any.
  std::optional<v1::GpuSpec> AnySpec(absl::Time now) const;
  // When the last worker was heard from; InfinitePast if never.
  absl::Time LastSeen() const;

 private:
  struct Entry {
    v1::WorkerGpu gpu;
    absl::Time last_seen;
  };
  Options options_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> workers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kbench

#endif  // KBENCH_SERVER_WORKER_REGISTRY_H_
