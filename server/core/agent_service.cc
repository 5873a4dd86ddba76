#include "server/core/agent_service.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/random_id.h"
#include "base/status_macros.h"
#include "base/text_diff.h"
#include "base/untrusted_input.h"
#include "contract/contract_text.h"
#include "contract/problem_util.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

double MsSince(absl::Time t0) {
  return absl::ToDoubleMilliseconds(absl::Now() - t0);
}

}  // namespace

absl::StatusOr<v1::GetProblemResponse> AgentService::GetProblem(
    const std::string& name, const std::string& session_id) {
  RETURN_IF_ERROR(ValidateSessionId(session_id));
  RETURN_IF_ERROR(ValidateSessionId(name, "problem", kProblemNameSource));
  const absl::Time t0 = absl::Now();
  const std::string wanted = name.empty() ? options_.default_problem : name;
  absl::StatusOr<const v1::Problem*> problem = problems_->Find(wanted);
  if (!problem.ok()) {
    sessions_->Record(session_id, "get_problem", MsSince(t0),
                      v1::VERDICT_REJECTED,
                      std::string(problem.status().message()));
    return problem.status();
  }
  v1::GetProblemResponse out;
  *out.mutable_problem() = PublicView(**problem);
  out.set_entry_prototype(
      EntryPrototype(out.problem(), out.problem().entry_point()));
  out.set_contract(KernelContractText(out.problem()));
  sessions_->Record(session_id, "get_problem", MsSince(t0), v1::VERDICT_PASSED,
                    "");
  return out;
}

absl::StatusOr<v1::Session> AgentService::CreateSession(
    const std::string& problem, const std::string& id) {
  RETURN_IF_ERROR(ValidateSessionId(id));
  RETURN_IF_ERROR(ValidateSessionId(problem, "problem", kProblemNameSource));
  if (!problem.empty()) RETURN_IF_ERROR(problems_->Find(problem).status());
  const std::string sid = id.empty() ? NewRandomId("s-") : id;
  return sessions_->Create(sid, problem);
}

absl::StatusOr<v1::GetSessionResponse> AgentService::GetSession(
    const std::string& id) {
  RETURN_IF_ERROR(ValidateSessionId(id));
  v1::GetSessionResponse out;
  ASSIGN_OR_RETURN(*out.mutable_session(), sessions_->Get(id));
  ASSIGN_OR_RETURN(std::vector<v1::Turn> turns, sessions_->Turns(id));
  for (v1::Turn& t : turns) *out.add_turns() = std::move(t);
  return out;
}

absl::StatusOr<std::vector<v1::Session>> AgentService::ListSessions(
    int limit, bool strict) {
  if (!strict) limit = limit <= 0 ? 20 : std::min(limit, 200);
  return sessions_->List(limit);
}

absl::StatusOr<AgentService::SessionDetail> AgentService::GetSessionDetail(
    const std::string& id) {
  RETURN_IF_ERROR(ValidateSessionId(id));
  SessionDetail out;
  ASSIGN_OR_RETURN(out.session, sessions_->Get(id));
  if (!out.session.problem().empty()) {
    absl::StatusOr<const v1::Problem*> p =
        problems_->Find(out.session.problem());
    if (p.ok()) out.problem = PublicView(**p);
  }
  ASSIGN_OR_RETURN(std::vector<v1::Turn> turns, sessions_->Turns(id));
  for (v1::Turn& t : turns) {
    SessionDetail::TurnDetail d;
    if (!t.job_id().empty()) {
      absl::StatusOr<v1::Job> job = jobs_->Get(t.job_id());
      if (job.ok()) {
        d.job = *std::move(job);
      } else {
        spdlog::warn("session {} turn {}: job {}: {}", id, t.seq(), t.job_id(),
                     std::string(job.status().message()));
      }
    }
    d.turn = std::move(t);
    out.turns.push_back(std::move(d));
  }
  return out;
}

absl::StatusOr<v1::Session> AgentService::CloseSession(const std::string& id) {
  RETURN_IF_ERROR(ValidateSessionId(id));
  return sessions_->Close(id);
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
    const std::string& session_id, int turn_a, int turn_b, bool record_turn) {
  RETURN_IF_ERROR(ValidateSessionId(session_id));
  const absl::Time t0 = absl::Now();
  // An unknown session is no turn (recording one would create it).
  RETURN_IF_ERROR(sessions_->Get(session_id).status());
  absl::StatusOr<v1::CompareRunsResponse> out =
      Compare(session_id, turn_a, turn_b);
  // A refused comparison (no such turn, a turn that ran no kernel) is a
  // turn too.
  if (record_turn) {
    sessions_->Record(session_id, "compare_runs", MsSince(t0),
                      out.ok() ? v1::VERDICT_PASSED : v1::VERDICT_REJECTED,
                      out.ok() ? "" : std::string(out.status().message()));
  }
  return out;
}

absl::StatusOr<v1::CompareRunsResponse> AgentService::Compare(
    const std::string& session_id, int turn_a, int turn_b) {
  ASSIGN_OR_RETURN(std::vector<v1::Turn> turns, sessions_->Turns(session_id));
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
  return out;
}

}  // namespace kbench
