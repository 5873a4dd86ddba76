#include "server/core/sweep_service.h"

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/error_proto.h"
#include "base/random_id.h"
#include "base/status_macros.h"
#include "base/untrusted_input.h"
#include "contract/launch_plan.h"
#include "contract/sweep_table.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

// "kernels[3] (softmax.cu)": how messages name a kernel of the request.
std::string KernelName(int index, const v1::KernelRequest& kernel) {
  std::string name = absl::StrCat("kernels[", index, "]");
  if (!kernel.filename().empty() && ValidateFileName(kernel.filename()).ok()) {
    absl::StrAppend(&name, " (", kernel.filename(), ")");
  }
  return name;
}

// The problem `kernel` is for: its field, else its `// @kb problem` line
// (read only from a source JobService would take: at most
// `max_source_bytes`, UTF-8).
absl::StatusOr<std::string> KernelProblem(int index,
                                          const v1::KernelRequest& kernel,
                                          size_t max_source_bytes) {
  const std::string who = KernelName(index, kernel);
  if (kernel.source().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        who, ": source is empty; pass the CUDA C++ text of one kernel file"));
  }
  if (kernel.source().size() > max_source_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        who, ": source is ", kernel.source().size(), " bytes; the limit is ",
        max_source_bytes, " bytes per kernel"));
  }
  if (absl::Status s = ValidateFileName(kernel.filename()); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": ", s.message()));
  }
  if (absl::Status s =
          ValidateSessionId(kernel.problem(), "problem", kProblemNameSource);
      !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": ", s.message()));
  }
  if (!kernel.problem().empty()) return kernel.problem();
  // Its lines may be quoted in the message below, which must be UTF-8.
  if (absl::Status s = ValidateUtf8(kernel.source(), "source"); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": ", s.message()));
  }
  absl::StatusOr<v1::LaunchPlan> plan = ParseLaunchPlan(kernel.source());
  if (!plan.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(who, ": ", plan.status().message()));
  }
  if (plan->problem().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(who,
                     " names no problem: set its `problem` field or put a "
                     "`// @kb problem NAME` line in its source"));
  }
  return plan->problem();
}

}  // namespace

SweepService::SweepService(const Options& options, JobService* jobs,
                           Store* store)
    : options_(options), jobs_(jobs), store_(store) {}

absl::StatusOr<v1::Sweep> SweepService::Submit(
    const v1::SubmitSweepRequest& request) {
  if (request.suite().empty()) {
    return absl::InvalidArgumentError(
        "suite is empty; name the suite to sweep (ListProblems lists them)");
  }
  v1::JobKind kind = request.kind();
  if (kind == v1::JOB_KIND_UNSPECIFIED) kind = v1::JOB_KIND_SUBMIT;
  if (!v1::JobKind_IsValid(kind)) {
    return absl::InvalidArgumentError(
        "kind must be SUBMIT (the default), CORRECTNESS, PROFILE, COMPILE or "
        "SANITIZE");
  }
  if (request.kernels().empty()) {
    return absl::InvalidArgumentError(
        "kernels is empty; give one kernel per problem of the suite");
  }
  if (request.kernels_size() > options_.max_kernels) {
    return absl::InvalidArgumentError(
        absl::StrCat("a sweep holds at most ", options_.max_kernels,
                     " kernels; this one has ", request.kernels_size(),
                     ": split it by suite"));
  }
  int64_t source_bytes = 0;
  for (const v1::KernelRequest& k : request.kernels()) {
    source_bytes += static_cast<int64_t>(k.source().size());
  }
  if (source_bytes > options_.max_source_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the sweep's kernels hold ", source_bytes, " bytes of source; at most ",
        options_.max_source_bytes, " are taken in one sweep"));
  }
  v1::ListProblemsRequest list;
  list.set_suite(request.suite());
  ASSIGN_OR_RETURN(v1::ListProblemsResponse suite, jobs_->ListProblems(list));
  std::map<std::string, int> row_of;  // Problem -> row.
  v1::Sweep sweep;
  sweep.set_id(NewRandomId("sw-"));
  sweep.set_suite(request.suite());
  sweep.set_kind(kind);
  std::vector<std::string> names;
  for (const v1::Problem& p : suite.problems()) {
    row_of[p.name()] = sweep.rows_size();
    sweep.add_rows()->set_problem(p.name());
    names.push_back(p.name());
  }
  // Every kernel's problem first, so that a bad batch starts no job.
  std::vector<int> rows(request.kernels_size());
  std::map<int, int> kernel_of_row;
  for (int i = 0; i < request.kernels_size(); ++i) {
    const v1::KernelRequest& kernel = request.kernels(i);
    ASSIGN_OR_RETURN(std::string problem,
                     KernelProblem(i, kernel, jobs_->max_source_bytes()));
    auto row = row_of.find(problem);
    if (row == row_of.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(KernelName(i, kernel), " is for problem '", problem,
                       "', which is not in suite '", request.suite(),
                       "' (its problems: ", absl::StrJoin(names, ", "), ")"));
    }
    auto [first, inserted] = kernel_of_row.emplace(row->second, i);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat(
          KernelName(i, kernel), " is for problem '", problem, "', as ",
          KernelName(first->second, request.kernels(first->second)),
          " is: a sweep runs one kernel per problem"));
    }
    rows[i] = row->second;
  }
  // Room for every job first, held until each is in, so that a full kbd
  // (or a race with other submits) never starts half a sweep.
  ASSIGN_OR_RETURN(JobTable::Reservation room,
                   jobs_->Reserve(request.kernels_size()));
  JobSubmitOptions submit;
  submit.sweep_id = sweep.id();
  submit.room = &room;
  std::optional<absl::Status> first_refusal;
  int started = 0;
  for (int i = 0; i < request.kernels_size(); ++i) {
    v1::KernelRequest kernel = request.kernels(i);
    v1::SweepRow* row = sweep.mutable_rows(rows[i]);
    kernel.set_problem(row->problem());
    row->set_filename(kernel.filename().empty() ? kDefaultKernelFileName
                                                : kernel.filename());
    absl::StatusOr<v1::Job> job = jobs_->Submit(kind, kernel, submit);
    if (job.ok()) {
      row->set_job_id(job->id());
      ++started;
      continue;
    }
    absl::Status refusal(
        job.status().code(),
        absl::StrCat(KernelName(i, kernel), ": ", job.status().message()));
    *row->mutable_error() = ToErrorProto(refusal);
    if (!first_refusal) first_refusal = refusal;
  }
  if (started == 0) return *first_refusal;
  // Stamped after its jobs: retention keeps a sweep while no unfinished job
  // is older than it, so a sweep stamped before a job it started could be
  // pruned while that job runs.
  sweep.set_created_unix_ms(absl::ToUnixMillis(absl::Now()));
  if (absl::Status stored = store_->InsertSweep(sweep); !stored.ok()) {
    return StoreFailed(sweep, stored);
  }
  return Fill(std::move(sweep));
}

absl::Status SweepService::StoreFailed(const v1::Sweep& sweep,
                                       const absl::Status& stored) {
  // Its jobs are cancelled: a caller who retries must not run them twice.
  // One may have finished already (a cached compile): it is left as it is.
  spdlog::error("sweep {}: could not be stored: {}", sweep.id(),
                stored.ToString());
  int cancelled = 0, finished = 0;
  for (const v1::SweepRow& row : sweep.rows()) {
    if (row.job_id().empty()) continue;
    absl::StatusOr<v1::Job> job = jobs_->Cancel(row.job_id());
    if (job.ok() && job->result().verdict() == v1::VERDICT_CANCELLED) {
      ++cancelled;
    } else {
      ++finished;
    }
  }
  const std::string jobs = absl::StrCat(
      cancelled, " of its jobs were cancelled",
      finished > 0 ? absl::StrCat(" (", finished, " had already finished)")
                   : "");
  // A sweep the store refuses as invalid is kbd's fault, not the disk's:
  // retrying would not help.
  if (absl::IsInvalidArgument(stored)) {
    return absl::InternalError(
        absl::StrCat("the sweep could not be stored (", stored.message(), "); ",
                     jobs, ". This is a fault in kbd; please report it"));
  }
  return absl::UnavailableError(absl::StrCat(
      "the sweep could not be stored (", stored.message(), "); ", jobs,
      ". Try again once kbd's store is writable (/healthz)"));
}

absl::StatusOr<v1::Sweep> SweepService::Get(const std::string& id) {
  RETURN_IF_ERROR(
      ValidateJobId(id, "sweep_id", "a sweep id as SubmitSweep returned it"));
  ASSIGN_OR_RETURN(v1::Sweep sweep, store_->GetSweep(id));
  return Fill(std::move(sweep));
}

v1::Sweep SweepService::Fill(v1::Sweep sweep) {
  for (v1::SweepRow& row : *sweep.mutable_rows()) {
    if (row.job_id().empty()) continue;
    absl::StatusOr<v1::Job> job = jobs_->GetJob(row.job_id());
    if (!job.ok()) {
      // Retention deleted it (or the store failed): the row is over.
      row.set_stage(v1::STAGE_DONE);
      *row.mutable_error() = ToErrorProto(
          absl::IsNotFound(job.status())
              ? absl::NotFoundError(absl::StrCat(
                    "job '", row.job_id(),
                    "' is no longer stored: retention deletes finished jobs "
                    "after --retention-days, or the oldest first past "
                    "--store-max-bytes"))
              : absl::Status(
                    job.status().code(),
                    absl::StrCat("job '", row.job_id(), "' cannot be read: ",
                                 job.status().message())));
      continue;
    }
    FillSweepRow(*job, &row);
  }
  SummarizeSweep(&sweep);
  return sweep;
}

}  // namespace kbench
