// JobService::Prepare (declared in server/core/job_service.h): checks a request
// and resolves what its job runs (problem, launch plan, shape sets, trials,
// arch and budget) before anything is stored or compiled.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "analysis/counter_figures.h"
#include "base/digest.h"
#include "base/status_macros.h"
#include "base/untrusted_input.h"
#include "contract/hidden_redact.h"
#include "contract/holdout.h"
#include "contract/job_defaults.h"
#include "contract/launch_plan.h"
#include "contract/names.h"
#include "contract/parsed_plan.h"
#include "contract/problem_util.h"
#include "contract/runner_job.h"
#include "server/core/job_service.h"
#include "server/core/job_service_internal.h"

namespace kbench {
namespace {

std::string KnownSets(const v1::Problem& problem) {
  std::vector<std::string> names;
  for (const v1::ShapeSet& s : problem.shape_sets()) {
    if (!s.hidden()) names.push_back(s.name());
  }
  return absl::StrCat(absl::StrJoin(names, ", "), " (and ", kRandomShapeSet,
                      " for run_correctness: cases drawn afresh from the "
                      "problem's size classes)");
}

}  // namespace

absl::Status JobService::ChooseCheckSets(const std::string& job_id,
                                         Prepared* p) const {
  const v1::Problem& problem = *p->problem;
  const std::string& name = p->request.shape_set();
  const v1::ShapeSet* chosen = nullptr;
  if (name == kRandomShapeSet) {
    if (p->kind != v1::JOB_KIND_CORRECTNESS) {
      return absl::InvalidArgumentError(
          absl::StrCat("the '", kRandomShapeSet,
                       "' shape set is drawn afresh on every call, so only "
                       "run_correctness takes it; ",
                       ToolNameOf(p->kind), " needs a fixed set: one of ",
                       KnownSets(problem)));
    }
    ASSIGN_OR_RETURN(v1::ShapeSet drawn,
                     DrawRandomSet(problem, HoldoutKeys::FreshKey()));
    p->check_sets.push_back(std::move(drawn));
  } else if (!name.empty()) {
    chosen = FindShapeSet(problem, name);
    if (chosen == nullptr || chosen->hidden()) {
      return absl::NotFoundError(
          absl::StrCat("problem '", problem.name(), "' has no shape set '",
                       name, "'; known: ", KnownSets(problem)));
    }
    p->check_sets.push_back(*chosen);
  } else if (p->kind == v1::JOB_KIND_PROFILE) {
    p->check_sets.push_back(
        *FindShapeSet(problem, problem.default_shape_set()));
  } else {
    for (const std::string& set : problem.check_shape_sets()) {
      p->check_sets.push_back(*FindShapeSet(problem, set));
    }
  }
  if (p->kind == v1::JOB_KIND_SUBMIT) {
    // Submit also runs the hidden sets: an operator's fixed ones, and every
    // size class's cases, drawn for this job from kbd's secret.
    for (const v1::ShapeSet& s : problem.shape_sets()) {
      if (s.hidden()) p->check_sets.push_back(s);
    }
    ASSIGN_OR_RETURN(std::vector<v1::ShapeSet> drawn,
                     DrawHoldoutSets(problem, holdout_keys_->ForJob(
                                                  problem.name(), job_id)));
    for (v1::ShapeSet& s : drawn) p->check_sets.push_back(std::move(s));
  }
  const v1::ShapeSet* timing =
      chosen ? chosen : FindShapeSet(problem, problem.default_shape_set());
  p->timing_set = timing->name();
  p->timing_shape = timing->shapes(0);
  return absl::OkStatus();
}

absl::StatusOr<JobService::Prepared> JobService::Prepare(
    v1::JobKind kind, const v1::KernelRequest& request,
    const std::string& job_id) const {
  Prepared p;
  p.kind = kind;
  p.request = request;
  if (kind == v1::JOB_KIND_UNSPECIFIED || !v1::JobKind_IsValid(kind)) {
    return absl::InvalidArgumentError(
        "kind must be COMPILE, CORRECTNESS, PROFILE or SUBMIT");
  }
  // Everything below may reach the store, log lines and NVRTC.
  RETURN_IF_ERROR(ValidateSessionId(request.session_id()));
  RETURN_IF_ERROR(ValidateFileName(request.filename()));
  RETURN_IF_ERROR(
      ValidateSessionId(request.problem(), "problem", kProblemNameSource));
  RETURN_IF_ERROR(
      ValidateSessionId(request.shape_set(), "shape_set",
                        "a shape set name as GetProblem returns it"));
  RETURN_IF_ERROR(ValidateUtf8(request.source(), "source"));
  const std::string& source = request.source();
  if (source.empty()) {
    return absl::InvalidArgumentError(
        "source is empty; pass the CUDA C++ text of one kernel file");
  }
  if (source.size() > options_.max_source_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "source is %d bytes; the limit is %d bytes (%d KiB). Send one kernel "
        "file without generated tables or embedded data",
        source.size(), options_.max_source_bytes,
        options_.max_source_bytes / 1024));
  }
  if (p.request.filename().empty()) {
    p.request.set_filename(kDefaultKernelFileName);
  }
  ASSIGN_OR_RETURN(p.plan, ParseLaunchPlan(source));
  // The runner refuses a larger plan as kbd's error; refuse it here as the
  // request's (args() lists encode longer than they are written).
  if (p.plan.ByteSizeLong() > kMaxPlanBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the launch plan is too large (", p.plan.ByteSizeLong(),
                     " bytes encoded, at most ", kMaxPlanBytes,
                     "): use fewer or shorter @kb launch and workspace lines"));
  }
  std::string problem_name = request.problem();
  if (problem_name.empty()) problem_name = p.plan.problem();
  if (problem_name.empty()) problem_name = options_.default_problem;
  ASSIGN_OR_RETURN(p.problem, problems_->Find(problem_name));
  p.request.set_problem(problem_name);
  // The timer tells a candidate's kernels from its baselines' by their
  // names where their order does not (CUPTI's records name a kernel, not
  // its module): the names must differ.
  for (const v1::Baseline* b : {&p.problem->baseline(), &p.problem->expert()}) {
    for (const v1::BaselineStep& step : b->steps()) {
      if (step.step_case() != v1::BaselineStep::kLaunch) continue;
      for (const v1::LaunchSpec& launch : p.plan.launches()) {
        if (launch.entry() == step.launch()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "kernel '", launch.entry(),
              "' has the name of a kernel of problem '", problem_name, "''s ",
              b == &p.problem->baseline() ? "baseline" : "expert baseline",
              ", and the timer tells the two apart by name: rename it (in its "
              "definition and its // @kb launch line)"));
        }
      }
    }
  }
  // Validated and parsed once; every shape below resolves the parsed form.
  ASSIGN_OR_RETURN(const ParsedPlan parsed,
                   ParsedPlan::Create(p.plan, *p.problem));

  if (request.trials() < 0 || request.trials() > options_.max_trials) {
    return absl::InvalidArgumentError(
        absl::StrCat("trials must be between 0 (the problem's default) and ",
                     options_.max_trials, "; got ", request.trials()));
  }
  if (request.budget_ms() < 0) {
    return absl::InvalidArgumentError("budget_ms must not be negative");
  }
  if (!request.arch().empty()) {
    const std::string& a = request.arch();
    if (!absl::StartsWith(a, "sm_") || a.size() < 5) {
      return absl::InvalidArgumentError(
          absl::StrCat("arch '", a, "' is not a GPU architecture like sm_90"));
    }
  }
  if (kind == v1::JOB_KIND_PROFILE) {
    ASSIGN_OR_RETURN(const ProfilePreset preset,
                     ParseProfilePreset(request.profile_preset()));
    p.request.set_profile_preset(ProfilePresetName(preset));
  }
  p.trials = request.trials() > 0 ? request.trials() : p.problem->trials();
  // GPU jobs run only on a worker of the arch they were compiled for.
  ASSIGN_OR_RETURN(p.arch, workers_->ChooseArch(
                               p.request.arch(), kind != v1::JOB_KIND_COMPILE,
                               options_.default_arch, absl::Now()));

  RETURN_IF_ERROR(ChooseCheckSets(job_id, &p));

  // Launch expressions and device limits (grid, block; shared memory needs
  // the compiled kernel and is checked again after compiling).
  // The strictest connected GPU of the job's arch, never one picked at
  // random (a worker reporting tiny limits must not fail other kernels).
  const v1::GpuSpec spec =
      workers_->StrictestSpec(p.arch, absl::Now()).value_or(DefaultGpuSpec());
  int budget = p.problem->time_budget_ms();
  for (const v1::ShapeSet& set : p.check_sets) {
    // How errors on this set's cases name them: "" for a visible set.
    const std::string hidden_words =
        set.hidden() ? HiddenCaseWords(set) : std::string();
    if (set.time_budget_ms() > 0) {
      budget = std::max(budget, set.time_budget_ms());
    }
    for (const v1::Shape& shape : set.shapes()) {
      absl::Status s = [&]() -> absl::Status {
        ASSIGN_OR_RETURN(DimValues dims, ShapeDims(*p.problem, shape));
        if (!SpansGpus(*p.problem)) {
          ASSIGN_OR_RETURN(ConcretePlan cp, parsed.Resolve(dims));
          RETURN_IF_ERROR(CheckDeviceLimits(cp, spec));
          p.resolved.push_back({std::move(cp), hidden_words});
          return absl::OkStatus();
        }
        // Each rank resolves the plan at its own `rank`.
        for (int r = 0; r < p.problem->world_size(); ++r) {
          ASSIGN_OR_RETURN(
              ConcretePlan cp,
              parsed.Resolve(RankDims(dims, r, p.problem->world_size())));
          RETURN_IF_ERROR(CheckDeviceLimits(cp, spec));
          p.resolved.push_back({std::move(cp), hidden_words});
        }
        return absl::OkStatus();
      }();
      if (!s.ok()) return set.hidden() ? HiddenPlanError(s, hidden_words) : s;
    }
  }
  if (const v1::ShapeSet* timing = FindShapeSet(*p.problem, p.timing_set);
      timing != nullptr && timing->time_budget_ms() > 0) {
    budget = std::max(budget, timing->time_budget_ms());
  }
  p.budget_ms = (request.budget_ms() > 0 ? std::min(request.budget_ms(), budget)
                                         : budget) *
                std::max(1, options_.budget_scale);
  p.digest = Sha256Hex(source);
  return p;
}

}  // namespace kbench
