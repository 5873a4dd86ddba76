#include "server/agent_service.h"

#include <algorithm>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/contract_text.h"
#include "common/problem_util.h"
#include "common/status_macros.h"
#include "common/text_diff.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

double MsSince(absl::Time t0) {
  return absl::ToDoubleMilliseconds(absl::Now() - t0);
}

}  // namespace

void AgentService::RecordTurn(const std::string& session_id,
                              const std::string& tool, double duration_ms,
                              v1::Verdict verdict, const std::string& message) {
  if (session_id.empty()) return;
  v1::Turn turn;
  turn.set_session_id(session_id);
  turn.set_tool(tool);
  turn.set_duration_ms(duration_ms);
  turn.set_verdict(verdict);
  turn.set_message(message);
  turn.set_created_unix_ms(absl::ToUnixMillis(absl::Now()));
  if (auto s = store_->AppendTurn(turn); !s.ok()) {
    spdlog::warn("recording a {} turn of session {}: {}", tool, session_id,
                 std::string(s.status().message()));
  }
}

absl::StatusOr<v1::GetProblemResponse> AgentService::GetProblem(
    const std::string& name, const std::string& session_id) {
  const absl::Time t0 = absl::Now();
  const std::string wanted = name.empty() ? options_.default_problem : name;
  absl::StatusOr<const v1::Problem*> problem = problems_->Find(wanted);
  if (!problem.ok()) {
    RecordTurn(session_id, "get_problem", MsSince(t0), v1::VERDICT_ERROR,
               std::string(problem.status().message()));
    return problem.status();
  }
  v1::GetProblemResponse out;
  *out.mutable_problem() = PublicView(**problem);
  out.set_entry_prototype(
      EntryPrototype(out.problem(), out.problem().entry_point()));
  out.set_contract(KernelContractText(out.problem()));
  RecordTurn(session_id, "get_problem", MsSince(t0), v1::VERDICT_PASSED, "");
  return out;
}

absl::StatusOr<v1::Session> AgentService::CreateSession(
    const std::string& problem, const std::string& id) {
  if (!problem.empty()) RETURN_IF_ERROR(problems_->Find(problem).status());
  std::string sid = id;
  if (sid.empty()) {
    sid = absl::StrFormat(
        "s-%012x", absl::Uniform<uint64_t>(absl::BitGen()) & 0xffffffffffffull);
  } else if (store_->GetSession(sid).ok()) {
    return absl::AlreadyExistsError(
        absl::StrCat("session '", sid, "' exists; pick another id"));
  }
  RETURN_IF_ERROR(
      store_->TouchSession(sid, problem, absl::ToUnixMillis(absl::Now())));
  return store_->GetSession(sid);
}

absl::StatusOr<v1::GetSessionResponse> AgentService::GetSession(
    const std::string& id) {
  v1::GetSessionResponse out;
  ASSIGN_OR_RETURN(*out.mutable_session(), store_->GetSession(id));
  ASSIGN_OR_RETURN(std::vector<v1::Turn> turns, store_->ListTurns(id));
  for (v1::Turn& t : turns) *out.add_turns() = std::move(t);
  return out;
}

absl::StatusOr<std::vector<v1::Session>> AgentService::ListSessions(int limit) {
  return store_->ListSessions(limit <= 0 ? 20 : std::min(limit, 200));
}

absl::StatusOr<v1::Session> AgentService::CloseSession(const std::string& id) {
  RETURN_IF_ERROR(store_->SetSessionStatus(id, "closed"));
  return store_->GetSession(id);
}

absl::StatusOr<v1::RunSummary> AgentService::Summarize(const v1::Turn& turn) {
  v1::RunSummary s;
  s.set_turn(turn.seq());
  s.set_tool(turn.tool());
  s.set_job_id(turn.job_id());
  if (turn.job_id().empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "turn ", turn.seq(), " (", turn.tool(),
        ") ran no kernel; compare turns of compile_kernel, run_correctness, "
        "profile_kernel or submit_kernel"));
  }
  ASSIGN_OR_RETURN(v1::Job job, jobs_->Get(turn.job_id()));
  const v1::JobResult& r = job.result();
  s.set_verdict(r.verdict());
  s.set_message(r.message());
  s.set_source_digest(job.source_digest());
  s.set_kernel_median_us(r.timing().kernel().median_us());
  s.set_reference_median_us(r.timing().reference().median_us());
  s.set_speedup(r.timing().speedup());
  s.set_kernel_launches(r.timing().kernel_launches());
  s.set_trials_passed(r.correctness().trials_passed());
  s.set_trials_run(r.correctness().trials_run());
  double worst = 0;
  for (const v1::TrialResult& t : r.correctness().trials()) {
    worst = std::max(worst, t.rel_norm_error());
  }
  s.set_max_rel_norm_error(worst);
  return s;
}

absl::StatusOr<v1::CompareRunsResponse> AgentService::CompareRuns(
    const std::string& session_id, int turn_a, int turn_b) {
  const absl::Time t0 = absl::Now();
  ASSIGN_OR_RETURN(v1::Session session, store_->GetSession(session_id));
  ASSIGN_OR_RETURN(std::vector<v1::Turn> turns, store_->ListTurns(session_id));
  auto find = [&](int seq) -> absl::StatusOr<v1::Turn> {
    for (const v1::Turn& t : turns) {
      if (t.seq() == seq) return t;
    }
    return absl::NotFoundError(absl::StrCat("session '", session_id,
                                            "' has no turn ", seq, "; it has ",
                                            turns.size(), " turn(s)"));
  };
  ASSIGN_OR_RETURN(v1::Turn ta, find(turn_a));
  ASSIGN_OR_RETURN(v1::Turn tb, find(turn_b));
  v1::CompareRunsResponse out;
  ASSIGN_OR_RETURN(*out.mutable_a(), Summarize(ta));
  ASSIGN_OR_RETURN(*out.mutable_b(), Summarize(tb));
  ASSIGN_OR_RETURN(std::string src_a,
                   store_->GetSource(out.a().source_digest()));
  ASSIGN_OR_RETURN(std::string src_b,
                   store_->GetSource(out.b().source_digest()));
  TextDiffOptions diff;
  diff.from_label = absl::StrCat("turn ", turn_a);
  diff.to_label = absl::StrCat("turn ", turn_b);
  TextDiffStats stats;
  out.set_source_diff(UnifiedDiff(src_a, src_b, diff, &stats));
  out.set_lines_added(stats.added);
  out.set_lines_removed(stats.removed);
  if (out.a().kernel_median_us() > 0 && out.b().kernel_median_us() > 0) {
    out.set_kernel_time_change_pct(
        100.0 * (out.b().kernel_median_us() - out.a().kernel_median_us()) /
        out.a().kernel_median_us());
    out.set_speedup_change(out.b().speedup() - out.a().speedup());
  }
  RecordTurn(session_id, "compare_runs", MsSince(t0), v1::VERDICT_PASSED, "");
  return out;
}

}  // namespace kbench
