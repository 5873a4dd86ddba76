#include "server/core/agent_service.h"

#include <algorithm>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
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
  RETURN_IF_ERROR(ValidateSessionId(session_id));
  RETURN_IF_ERROR(ValidateSessionId(name, "problem"));
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
  RETURN_IF_ERROR(ValidateSessionId(id));
  RETURN_IF_ERROR(ValidateSessionId(problem, "problem"));
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
  RETURN_IF_ERROR(ValidateSessionId(id));
  v1::GetSessionResponse out;
  ASSIGN_OR_RETURN(*out.mutable_session(), store_->GetSession(id));
  ASSIGN_OR_RETURN(std::vector<v1::Turn> turns, store_->ListTurns(id));
  for (v1::Turn& t : turns) *out.add_turns() = std::move(t);
  return out;
}

absl::StatusOr<std::vector<v1::Session>> AgentService::ListSessions(int limit) {
  return store_->ListSessions(limit <= 0 ? 20 : std::min(limit, 200));
}

absl::StatusOr<std::vector<AgentService::SessionSummary>>
AgentService::ListSessionSummaries(int limit) {
  if (limit < 1 || limit > 200) {
    return absl::InvalidArgumentError(
        absl::StrCat("limit must be from 1 to 200 sessions, not ", limit));
  }
  ASSIGN_OR_RETURN(std::vector<v1::Session> sessions,
                   store_->ListSessions(limit));
  std::vector<SessionSummary> out;
  out.reserve(sessions.size());
  for (v1::Session& s : sessions) {
    out.push_back(SummarizeSession(std::move(s)));
  }
  return out;
}

AgentService::SessionSummary AgentService::SummarizeSession(
    v1::Session session) {
  SessionSummary out;
  absl::StatusOr<std::vector<v1::Turn>> turns = store_->ListTurns(session.id());
  if (!turns.ok()) {
    spdlog::warn("summarizing session {}: {}", session.id(),
                 std::string(turns.status().message()));
  } else {
    for (const v1::Turn& t : *turns) {
      out.best_speedup = std::max(out.best_speedup, PassedSpeedup(t));
    }
    if (!turns->empty()) {
      out.last_tool = turns->back().tool();
      out.last_verdict = turns->back().verdict();
    }
  }
  out.session = std::move(session);
  return out;
}

double AgentService::PassedSpeedup(const v1::Turn& turn) {
  if (turn.job_id().empty() || turn.verdict() != v1::VERDICT_PASSED ||
      (turn.tool() != "submit_kernel" && turn.tool() != "profile_kernel")) {
    return 0;
  }
  {
    absl::MutexLock lock(&cache_mu_);
    auto it = speedups_.find(turn.job_id());
    if (it != speedups_.end()) return it->second;
  }
  absl::StatusOr<v1::Job> job = jobs_->Get(turn.job_id());
  if (!job.ok() || job->stage() != v1::STAGE_DONE) return 0;
  const double speedup = job->result().verdict() == v1::VERDICT_PASSED
                             ? job->result().timing().speedup()
                             : 0;
  absl::MutexLock lock(&cache_mu_);
  if (speedups_.size() >= kSpeedupCacheSize) speedups_.clear();
  speedups_[turn.job_id()] = speedup;
  return speedup;
}

absl::StatusOr<AgentService::SessionDetail> AgentService::GetSessionDetail(
    const std::string& id) {
  RETURN_IF_ERROR(ValidateSessionId(id));
  SessionDetail out;
  ASSIGN_OR_RETURN(out.session, store_->GetSession(id));
  if (!out.session.problem().empty()) {
    absl::StatusOr<const v1::Problem*> p =
        problems_->Find(out.session.problem());
    if (p.ok()) out.problem = PublicView(**p);
  }
  ASSIGN_OR_RETURN(std::vector<v1::Turn> turns, store_->ListTurns(id));
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
    const std::string& session_id, int turn_a, int turn_b, bool record_turn) {
  RETURN_IF_ERROR(ValidateSessionId(session_id));
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
  if (record_turn) {
    RecordTurn(session_id, "compare_runs", MsSince(t0), v1::VERDICT_PASSED, "");
  }
  return out;
}

}  // namespace kbench
