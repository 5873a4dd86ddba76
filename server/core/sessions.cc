#include "server/core/sessions.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "base/untrusted_input.h"
#include "contract/names.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

// As the store's bound (server/store/store_sessions.cc).
constexpr double kMaxSpeedup = 1e6;

// `text` cut to at most `max_bytes`, never inside a UTF-8 sequence.
std::string CutUtf8(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  return absl::StrCat(Utf8Prefix(text, max_bytes), "...");
}

bool RequestAtFault(absl::StatusCode code) {
  return code == absl::StatusCode::kInvalidArgument ||
         code == absl::StatusCode::kNotFound ||
         code == absl::StatusCode::kOutOfRange ||
         code == absl::StatusCode::kResourceExhausted;
}

}  // namespace

std::optional<Store::SessionTurn> Sessions::TurnOf(const v1::Job& job) const {
  if (job.session_id().empty()) return std::nullopt;
  Store::SessionTurn out;
  v1::Turn& turn = out.turn;
  turn.set_session_id(job.session_id());
  turn.set_tool(ToolNameOf(job.kind()));
  turn.set_job_id(job.id());
  turn.set_duration_ms(job.finished_unix_ms() - job.created_unix_ms());
  turn.set_source_digest(job.source_digest());
  turn.set_verdict(job.result().verdict());
  turn.set_created_unix_ms(job.finished_unix_ms());
  turn.set_message(CutUtf8(job.result().message(), options_.max_message_bytes));
  const bool timed =
      job.kind() == v1::JOB_KIND_SUBMIT || job.kind() == v1::JOB_KIND_PROFILE;
  if (timed && job.result().verdict() == v1::VERDICT_PASSED) {
    const double speedup = job.result().timing().speedup();
    if (speedup > 0 && speedup <= kMaxSpeedup) {
      turn.set_speedup(speedup);
    } else if (speedup != 0) {
      spdlog::warn("job {}: speedup {} is not recorded in session {}", job.id(),
                   speedup, job.session_id());
    }
  }
  if (job.kind() == v1::JOB_KIND_SUBMIT) out.status = "submitted";
  return out;
}

void Sessions::Append(v1::Turn turn) {
  turn.set_message(CutUtf8(turn.message(), options_.max_message_bytes));
  if (turn.created_unix_ms() == 0) {
    turn.set_created_unix_ms(absl::ToUnixMillis(absl::Now()));
  }
  if (auto s = store_->AppendTurn(turn); !s.ok()) {
    spdlog::warn("recording a {} turn of session {}: {}", turn.tool(),
                 turn.session_id(), std::string(s.status().message()));
  }
}

void Sessions::Record(const std::string& session_id, const std::string& tool,
                      double duration_ms, v1::Verdict verdict,
                      const std::string& message) {
  if (session_id.empty()) return;
  v1::Turn turn;
  turn.set_session_id(session_id);
  turn.set_tool(tool);
  turn.set_duration_ms(duration_ms);
  turn.set_verdict(verdict);
  turn.set_message(message);
  Append(std::move(turn));
}

void Sessions::RecordRefused(const std::string& session_id, v1::JobKind kind,
                             double duration_ms, const absl::Status& refusal) {
  // A refusal for a bad session id cannot be recorded under that id.
  if (session_id.empty() || !ValidateSessionId(session_id).ok()) return;
  Record(
      session_id, ToolNameOf(kind), duration_ms,
      RequestAtFault(refusal.code()) ? v1::VERDICT_REJECTED : v1::VERDICT_ERROR,
      absl::StrCat("refused: ", refusal.message()));
}

void Sessions::Touch(const std::string& session_id,
                     const std::string& problem) {
  if (session_id.empty()) return;
  if (absl::Status s = store_->TouchSession(session_id, problem,
                                            absl::ToUnixMillis(absl::Now()));
      !s.ok()) {
    spdlog::warn("touching session {}: {}", session_id,
                 std::string(s.message()));
  }
}

absl::StatusOr<v1::Session> Sessions::Create(const std::string& id,
                                             const std::string& problem) {
  if (store_->GetSession(id).ok()) {
    return absl::AlreadyExistsError(
        absl::StrCat("session '", id, "' exists; pick another id"));
  }
  RETURN_IF_ERROR(
      store_->TouchSession(id, problem, absl::ToUnixMillis(absl::Now())));
  return store_->GetSession(id);
}

absl::StatusOr<v1::Session> Sessions::Get(const std::string& id) {
  return store_->GetSession(id);
}

absl::StatusOr<std::vector<v1::Session>> Sessions::List(int limit) {
  if (limit < 1 || limit > options_.max_list) {
    return absl::InvalidArgumentError(absl::StrCat("limit must be from 1 to ",
                                                   options_.max_list,
                                                   " sessions, not ", limit));
  }
  return store_->ListSessions(limit);
}

absl::StatusOr<std::vector<v1::Turn>> Sessions::Turns(const std::string& id) {
  return store_->ListTurns(id);
}

absl::StatusOr<v1::Session> Sessions::Close(const std::string& id) {
  RETURN_IF_ERROR(store_->SetSessionStatus(id, "closed"));
  return store_->GetSession(id);
}

}  // namespace kbench
