#include "server/core/kbd_metrics.h"

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "contract/names.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

constexpr char kFinished[] = "kbench_jobs_finished_total";
constexpr char kFinishedHelp[] =
    "Jobs finished, by kind (compile, correctness, profile, submit) and "
    "verdict.";
constexpr char kDuration[] = "kbench_tool_duration_seconds";
constexpr char kDurationHelp[] =
    "Time from a job's submission to its result, by tool.";

absl::StatusOr<Metrics::Counter*> FinishedCounter(Metrics* metrics) {
  return metrics->AddCounter(kFinished, kFinishedHelp, {"kind", "verdict"});
}

absl::StatusOr<Metrics::Histogram*> DurationHistogram(Metrics* metrics) {
  return metrics->AddHistogram(kDuration, kDurationHelp, {"tool"},
                               Metrics::DurationBuckets());
}

}  // namespace

absl::Status RegisterKbdMetrics(Metrics* metrics, const Scheduler* scheduler,
                                const WorkerRegistry* workers,
                                const JobTable* jobs) {
  RETURN_IF_ERROR(metrics->AddGaugeFn(
      "kbench_queue_depth", "Compiled jobs waiting for a GPU.", {},
      [scheduler] {
        return std::vector<Metrics::Sample>{
            {{}, static_cast<double>(scheduler->QueueDepth())}};
      }));
  RETURN_IF_ERROR(metrics->AddGaugeFn(
      "kbench_workers_connected", "GPU workers connected.", {}, [workers] {
        return std::vector<Metrics::Sample>{
            {{}, static_cast<double>(workers->Live(absl::Now()).size())}};
      }));
  RETURN_IF_ERROR(metrics->AddGaugeFn(
      "kbench_jobs", "Unfinished jobs in memory, by stage.", {"stage"}, [jobs] {
        const v1::Stage stages[] = {v1::STAGE_QUEUED, v1::STAGE_COMPILING,
                                    v1::STAGE_WAITING_GPU, v1::STAGE_RUNNING};
        std::vector<Metrics::Sample> out;
        for (v1::Stage s : stages) out.push_back({{StageName(s)}, 0});
        for (const v1::Job& j : jobs->Unfinished()) {
          for (Metrics::Sample& s : out) {
            if (s.labels[0] == StageName(j.stage())) s.value += 1;
          }
        }
        return out;
      }));
  RETURN_IF_ERROR(FinishedCounter(metrics).status());
  RETURN_IF_ERROR(DurationHistogram(metrics).status());
  RETURN_IF_ERROR(metrics->AddCounterFn(
      "kbench_gpu_busy_seconds_total",
      "Seconds each GPU worker spent running jobs.", {"worker"}, [workers] {
        std::vector<Metrics::Sample> out;
        for (const WorkerRegistry::WorkerStats& w :
             workers->AllStats(absl::Now())) {
          out.push_back({{w.gpu.worker_id()}, w.busy_seconds});
        }
        return out;
      }));
  return absl::OkStatus();
}

void RecordJobFinished(Metrics* metrics, const v1::Job& job) {
  absl::StatusOr<Metrics::Counter*> finished = FinishedCounter(metrics);
  absl::StatusOr<Metrics::Histogram*> duration = DurationHistogram(metrics);
  if (!finished.ok() || !duration.ok()) {
    spdlog::error("metrics of finished jobs: {} {}",
                  finished.status().ToString(), duration.status().ToString());
    return;
  }
  (*finished)->Increment(
      {JobKindName(job.kind()), VerdictName(job.result().verdict())});
  const int64_t ms = job.finished_unix_ms() - job.created_unix_ms();
  (*duration)->Observe({ToolNameOf(job.kind())}, ms > 0 ? ms / 1000.0 : 0.0);
}

}  // namespace kbench
