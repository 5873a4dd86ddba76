#include "tests/fuzz/fake_backend.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/profile_fixtures.h"
#include "base/text_diff.h"
#include "contract/contract_text.h"
#include "contract/launch_plan.h"
#include "contract/problem_util.h"
#include "report/report_fixtures.h"

namespace kbench {
namespace fuzz {
namespace {

// Which canned answer a request gets.
size_t Pick(absl::string_view a, absl::string_view b = "") {
  return std::hash<std::string>()(absl::StrCat(a, "\x1f", b));
}

}  // namespace

FakeToolBackend::FakeToolBackend(v1::Problem problem)
    : problem_(std::move(problem)) {}

absl::StatusOr<v1::GetGpuSpecsResponse> FakeToolBackend::GetGpuSpecs(
    const std::string& session_id) {
  ++calls_;
  if (Pick(session_id) % 5 == 0) {
    return absl::UnavailableError(
        "no worker is connected; start kbworker on a GPU host");
  }
  v1::GetGpuSpecsResponse response;
  v1::WorkerGpu* gpu = response.add_gpus();
  gpu->set_worker_id("w-1");
  gpu->set_hostname(session_id);
  *gpu->mutable_spec() = profile_fixtures::Gpu();
  gpu->mutable_spec()->set_name("NVIDIA H200");
  gpu->mutable_spec()->set_arch("sm_90");
  gpu->set_busy(Pick(session_id) % 2 == 0);
  gpu->set_current_job_id(session_id);
  return response;
}

absl::StatusOr<v1::ListProblemsResponse> FakeToolBackend::ListProblems(
    const std::string& suite) {
  ++calls_;
  const bool in_suite =
      suite.empty() ||
      std::find(problem_.suites().begin(), problem_.suites().end(), suite) !=
          problem_.suites().end();
  if (!in_suite) {
    return absl::NotFoundError(absl::StrCat("unknown suite '", suite, "'"));
  }
  v1::ListProblemsResponse response;
  *response.add_problems() = PublicView(problem_);
  for (const std::string& s : problem_.suites()) response.add_suites(s);
  return response;
}

absl::StatusOr<v1::GetProblemResponse> FakeToolBackend::GetProblem(
    const std::string& name, const std::string& session_id) {
  ++calls_;
  if (!name.empty() && name != problem_.name()) {
    return absl::NotFoundError(absl::StrCat(
        "problem '", name, "' is not served here; list_problems shows ",
        problem_.name()));
  }
  v1::GetProblemResponse response;
  *response.mutable_problem() = PublicView(problem_);
  response.set_entry_prototype(
      EntryPrototype(problem_, problem_.entry_point()));
  response.set_contract(KernelContractText(problem_));
  return response;
}

absl::StatusOr<v1::Job> FakeToolBackend::RunJob(
    v1::JobKind kind, const v1::KernelRequest& request) {
  ++calls_;
  const size_t pick = Pick(request.source(), request.session_id());
  if (pick % 11 == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape_set '", request.shape_set(), "' is unknown"));
  }
  v1::Job job = report_fixtures::PassedSubmitJob();
  job.set_kind(kind);
  job.set_problem(request.problem().empty() ? problem_.name()
                                            : request.problem());
  job.set_shape_set(request.shape_set());
  job.set_session_id(request.session_id());
  job.set_filename(request.filename());
  job.set_stage_detail(request.profile_preset());
  v1::JobResult* r = job.mutable_result();
  r->set_log(request.source().substr(0, 2048));
  absl::StatusOr<v1::LaunchPlan> plan = ParseLaunchPlan(request.source());
  if (plan.ok()) {
    *r->mutable_compile()->mutable_plan() = *plan;
  } else {
    r->set_verdict(v1::VERDICT_REJECTED);
    r->set_message(std::string(plan.status().message()));
    return job;
  }
  if (kind == v1::JOB_KIND_PROFILE) {
    *r->mutable_profile() = profile_fixtures::CleanProfile();
  }
  switch (pick % 5) {
    case 0:
      break;  // Passed, as built.
    case 1:
      r->set_verdict(v1::VERDICT_FAILED);
      r->mutable_correctness()->set_passed(false);
      *r->mutable_correctness()->add_trials() =
          report_fixtures::Trial(request.shape_set(), pick, false);
      r->set_message(absl::StrCat("wrong result on ", request.shape_set()));
      break;
    case 2: {
      r->set_verdict(v1::VERDICT_COMPILE_ERROR);
      *r->mutable_compile() = report_fixtures::FailedCompile();
      r->mutable_compile()->set_log(r->log());
      v1::Diagnostic* d = r->mutable_compile()->add_diagnostics();
      d->set_line(static_cast<int>(pick % 400));
      d->set_severity("error");
      d->set_message(request.source().substr(0, 300));
      r->clear_correctness();
      r->clear_timing();
      break;
    }
    case 3:
      r->set_verdict(v1::VERDICT_CRASHED);
      r->set_message(request.source().substr(0, 120));
      r->clear_timing();
      break;
    default:
      r->set_verdict(v1::VERDICT_TIMED_OUT);
      r->mutable_error()->set_code(4);
      r->mutable_error()->set_message(request.arch());
      break;
  }
  return job;
}

absl::StatusOr<v1::CompareRunsResponse> FakeToolBackend::CompareRuns(
    const std::string& session_id, int turn_a, int turn_b) {
  ++calls_;
  if (turn_a <= 0 || turn_b <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "turns are numbered from 1; got ", turn_a, " and ", turn_b));
  }
  v1::CompareRunsResponse response;
  response.mutable_a()->set_turn(turn_a);
  response.mutable_a()->set_verdict(v1::VERDICT_PASSED);
  response.mutable_a()->set_kernel_median_us(12.5);
  response.mutable_a()->set_message(session_id);
  response.mutable_b()->set_turn(turn_b);
  response.mutable_b()->set_verdict(v1::VERDICT_FAILED);
  response.mutable_b()->set_kernel_median_us(turn_b);
  TextDiffStats stats;
  response.set_source_diff(UnifiedDiff(
      session_id, absl::StrCat(session_id, "\n// turn ", turn_b), {}, &stats));
  response.set_lines_added(stats.added);
  response.set_lines_removed(stats.removed);
  response.set_kernel_time_change_pct(100.0 * (turn_b - 12.5) /
                                      12.5);  // Any double the text must show.
  return response;
}

}  // namespace fuzz
}  // namespace kbench
