// Helpers shared by the two files of Scheduler (scheduler.cc and
// scheduler_waits.cc); not part of its interface.
#ifndef KBENCH_SERVER_CORE_SCHEDULER_INTERNAL_H_
#define KBENCH_SERVER_CORE_SCHEDULER_INTERNAL_H_

#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "base/error_proto.h"
#include "kbench/v1/worker.pb.h"

namespace kbench::scheduler_internal {

// The job's result when kbd ends it without a worker's verdict.
inline v1::JobResult Failure(const absl::Status& status) {
  v1::JobResult r;
  r.set_verdict(v1::VERDICT_ERROR);
  *r.mutable_error() = ToErrorProto(status);
  r.set_message(std::string(status.message()));
  return r;
}

// GPUs the job spans: RunnerJob.world_size, where 0 means 1.
inline int WorldSize(const v1::RunnerJob& job) {
  return std::max(1, job.world_size());
}

}  // namespace kbench::scheduler_internal

#endif  // KBENCH_SERVER_CORE_SCHEDULER_INTERNAL_H_
