// kbd's Prometheus metrics (served at GET /metrics):
//   kbench_queue_depth                     gauge: jobs waiting for a GPU
//   kbench_workers_connected               gauge: GPU workers connected
//   kbench_jobs{stage}                     gauge: unfinished jobs in memory
//                                          (queued, compiling, waiting_gpu,
//                                          running)
//   kbench_jobs_finished_total{kind,verdict}  counter
//   kbench_tool_duration_seconds{tool}     histogram: job submission to
//                                          result (Metrics::DurationBuckets)
//   kbench_gpu_busy_seconds_total{worker}  counter: per worker id
// The gauges and GPU busy time are computed at each scrape; finished jobs
// are counted by RecordJobFinished (JobService::Finish calls it).
//
// Ownership: RegisterKbdMetrics's callbacks borrow the scheduler, worker
// registry and job table, which must outlive the last scrape.
// Thread safety: both functions are thread safe.
#ifndef KBENCH_SERVER_CORE_KBD_METRICS_H_
#define KBENCH_SERVER_CORE_KBD_METRICS_H_

#include "absl/status/status.h"
#include "base/metrics.h"
#include "kbench/v1/kbench.pb.h"
#include "server/core/job_table.h"
#include "server/core/scheduler.h"
#include "server/core/worker_registry.h"

namespace kbench {

// Adds every family above to `metrics` (the finished-job families empty
// until a job finishes). Errors only when `metrics` already has a family of
// the same name but another shape.
absl::Status RegisterKbdMetrics(Metrics* metrics, const Scheduler* scheduler,
                                const WorkerRegistry* workers,
                                const JobTable* jobs);

// Counts a finished job: kbench_jobs_finished_total{kind,verdict} and its
// time from creation to end in kbench_tool_duration_seconds{tool}.
void RecordJobFinished(Metrics* metrics, const v1::Job& job);

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_KBD_METRICS_H_
