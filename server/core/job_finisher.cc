#include "server/core/job_finisher.h"

#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "analysis/profile_analysis.h"
#include "contract/hidden_redact.h"
#include "contract/names.h"
#include "contract/problem_util.h"
#include "server/core/kbd_metrics.h"
#include "spdlog/spdlog.h"

namespace kbench {

void JobFinisher::Finish(const std::string& job_id, v1::JobResult result) {
  if (absl::StatusOr<v1::Job> live = jobs_->Get(job_id); live.ok()) {
    if (absl::StatusOr<const v1::Problem*> problem =
            problems_->Find(live->problem());
        problem.ok()) {
      RedactHiddenCases(HiddenNames(**problem), &result);
    }
    if (live->stage() != v1::STAGE_DONE) AnalyzeProfileResult(*live, &result);
  }
  absl::StatusOr<v1::Job> job = jobs_->Finish(
      job_id,
      [&](v1::Job* j) {
        j->set_stage_detail(VerdictName(result.verdict()));
        j->set_queue_position(0);
        j->set_finished_unix_ms(absl::ToUnixMillis(absl::Now()));
        if (!result.worker_id().empty()) j->set_worker_id(result.worker_id());
        *j->mutable_result() = std::move(result);
      },
      [this](const v1::Job& j) { return sessions_->TurnOf(j); });
  if (!job.ok()) return;  // Already finished (e.g. cancelled).
  if (metrics_ != nullptr) RecordJobFinished(metrics_, *job);
  spdlog::info("job {} {} {}: {} in {} ms", job->id(), ToolNameOf(job->kind()),
               job->problem(), VerdictName(job->result().verdict()),
               job->finished_unix_ms() - job->created_unix_ms());
}

void JobFinisher::AnalyzeProfileResult(const v1::Job& job,
                                       v1::JobResult* result) {
  if (job.kind() != v1::JOB_KIND_PROFILE || !result->has_profile()) return;
  AnalyzeProfile(result->gpu(), result->mutable_profile());
  if (job.session_id().empty()) return;
  absl::StatusOr<std::vector<v1::Turn>> turns =
      sessions_->Turns(job.session_id());
  if (!turns.ok()) {
    spdlog::warn("job {}: reading session {} for the previous profile: {}",
                 job.id(), job.session_id(),
                 std::string(turns.status().message()));
    return;
  }
  const std::string tool = ToolNameOf(v1::JOB_KIND_PROFILE);
  int looked = 0;
  // The newest earlier profile of the same problem and shape.
  for (auto it = turns->rbegin(); it != turns->rend(); ++it) {
    if (it->tool() != tool || it->job_id().empty() ||
        it->job_id() == job.id()) {
      continue;
    }
    if (++looked > options_.max_profiles_to_look_back) break;
    absl::StatusOr<v1::Job> previous = jobs_->Get(it->job_id());
    if (!previous.ok()) {
      spdlog::warn("job {}: reading the previous profile job {}: {}", job.id(),
                   it->job_id(), std::string(previous.status().message()));
      continue;
    }
    const v1::ProfileReport& before = previous->result().profile();
    if (!previous->result().has_profile() ||
        previous->problem() != job.problem() ||
        before.shape() != result->profile().shape()) {
      continue;
    }
    ComputeDeltas(before, previous->id(), result->mutable_profile());
    return;
  }
}

}  // namespace kbench
