// Store's sessions and turns (the rest of Store is in store.cc).
#include <sqlite3.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "server/store/sqlite_stmt.h"
#include "server/store/store.h"

namespace kbench {
namespace {

int64_t NowMs() { return absl::ToUnixMillis(absl::Now()); }

bool ValidSessionStatus(const std::string& status) {
  return status == "open" || status == "submitted" || status == "closed";
}

// Creates session `id` (status "open") or moves its updated time forward and
// fills its problem if empty. Callers hold the store's lock.
absl::Status UpsertSession(sqlite3* db, const std::string& id,
                           const std::string& problem, int64_t now_ms) {
  ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      SqliteStmt::Prepare(
          db,
          "INSERT INTO sessions(id, problem, status, created_ms, updated_ms, "
          "turns) VALUES(?1, ?2, 'open', ?3, ?3, 0) "
          "ON CONFLICT(id) DO UPDATE SET "
          "updated_ms = MAX(sessions.updated_ms, excluded.updated_ms), "
          "problem = CASE WHEN sessions.problem = '' THEN excluded.problem "
          "ELSE sessions.problem END",
          "touch session"));
  stmt.BindText(1, id).BindText(2, problem).BindInt64(3, now_ms);
  return stmt.Run();
}

constexpr char kSessionColumns[] =
    "SELECT id, problem, created_ms, updated_ms, status, turns, best_speedup, "
    "last_tool, last_verdict FROM sessions";

// Above any real speedup (a kernel 10^6 times faster than its baseline):
// result checks refuse impossible ones before they reach a turn.
constexpr double kMaxStoredSpeedup = 1e6;

v1::Session ReadSession(const SqliteStmt& stmt) {
  v1::Session session;
  session.set_id(stmt.ColumnText(0));
  session.set_problem(stmt.ColumnText(1));
  session.set_created_unix_ms(stmt.ColumnInt64(2));
  session.set_updated_unix_ms(stmt.ColumnInt64(3));
  session.set_status(stmt.ColumnText(4));
  session.set_turns(static_cast<int32_t>(stmt.ColumnInt64(5)));
  session.set_best_speedup(stmt.ColumnDouble(6));
  session.set_last_tool(stmt.ColumnText(7));
  session.set_last_verdict(static_cast<v1::Verdict>(stmt.ColumnInt64(8)));
  return session;
}

// Whether every text column of a session or turn is UTF-8: a proto3
// string that is not would make the whole response unparsable for the
// client (ListSessions, the dashboard's polls).
bool Readable(const v1::Session& s) {
  return IsValidUtf8(s.id()) && IsValidUtf8(s.problem()) &&
         IsValidUtf8(s.status()) && IsValidUtf8(s.last_tool());
}
bool Readable(const v1::Turn& t) { return FindNonUtf8Field(t).empty(); }

constexpr char kNotUtf8[] = "a text column is not UTF-8";

}  // namespace

absl::Status Store::TouchSession(const std::string& id,
                                 const std::string& problem,
                                 int64_t now_unix_ms) {
  if (id.empty()) {
    return absl::InvalidArgumentError("TouchSession: empty session id");
  }
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckText(id, "TouchSession: the session id"));
  RETURN_IF_ERROR(CheckText(problem, "TouchSession: the problem"));
  return UpsertSession(db_, id, problem, now_unix_ms);
}

absl::StatusOr<v1::Turn> Store::AppendTurn(const v1::Turn& turn) {
  absl::MutexLock lock(&mu_);
  SqliteTransaction txn(db_);
  RETURN_IF_ERROR(txn.Begin("append turn"));
  ASSIGN_OR_RETURN(v1::Turn stored, AppendTurnLocked(turn));
  RETURN_IF_ERROR(txn.Commit("append turn"));
  return stored;
}

absl::StatusOr<v1::Turn> Store::AppendTurnLocked(v1::Turn stored) {
  if (stored.session_id().empty()) {
    return absl::InvalidArgumentError("AppendTurn: the turn has no session_id");
  }
  if (!(stored.speedup() >= 0) || stored.speedup() > kMaxStoredSpeedup) {
    // NaN, negative or absurd: a summary column would carry it forever.
    return absl::InvalidArgumentError(
        absl::StrCat("AppendTurn: speedup ", stored.speedup(),
                     " is not in [0, ", kMaxStoredSpeedup, "]"));
  }
  if (stored.created_unix_ms() == 0) stored.set_created_unix_ms(NowMs());
  RETURN_IF_ERROR(CheckWritableProto(stored, "AppendTurn"));
  RETURN_IF_ERROR(
      UpsertSession(db_, stored.session_id(), "", stored.created_unix_ms()));
  {
    // After the session's count as well as its highest turn: retention
    // may have pruned every turn, and seq numbers are never reused.
    ASSIGN_OR_RETURN(
        SqliteStmt stmt,
        SqliteStmt::Prepare(
            db_,
            "SELECT MAX(COALESCE((SELECT MAX(seq) FROM turns WHERE "
            "session_id = ?1), 0), COALESCE((SELECT turns FROM sessions "
            "WHERE id = ?1), 0)) + 1",
            "next turn seq"));
    stmt.BindText(1, stored.session_id());
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    stored.set_seq(row ? static_cast<int32_t>(stmt.ColumnInt64(0)) : 1);
  }
  {
    ASSIGN_OR_RETURN(
        SqliteStmt stmt,
        SqliteStmt::Prepare(
            db_,
            "INSERT INTO turns(session_id, seq, tool, job_id, duration_ms, "
            "source_digest, verdict, created_ms, message, speedup) "
            "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            "insert turn"));
    stmt.BindText(1, stored.session_id())
        .BindInt64(2, stored.seq())
        .BindText(3, stored.tool())
        .BindText(4, stored.job_id())
        .BindDouble(5, stored.duration_ms())
        .BindText(6, stored.source_digest())
        .BindInt64(7, stored.verdict())
        .BindInt64(8, stored.created_unix_ms())
        .BindText(9, stored.message())
        .BindDouble(10, stored.speedup());
    RETURN_IF_ERROR(stmt.Run());
  }
  {
    // The session's summary is written with the turn, so that listing
    // sessions (the dashboard polls it) reads one table.
    ASSIGN_OR_RETURN(
        SqliteStmt stmt,
        SqliteStmt::Prepare(
            db_,
            "UPDATE sessions SET turns = turns + 1, last_tool = ?2, "
            "last_verdict = ?3, best_speedup = MAX(best_speedup, ?4) "
            "WHERE id = ?1",
            "count turn"));
    stmt.BindText(1, stored.session_id())
        .BindText(2, stored.tool())
        .BindInt64(3, stored.verdict())
        .BindDouble(4, stored.speedup());
    RETURN_IF_ERROR(stmt.Run());
  }
  return stored;
}

absl::Status Store::SetSessionStatus(const std::string& id,
                                     const std::string& status) {
  absl::MutexLock lock(&mu_);
  return SetSessionStatusLocked(id, status);
}

absl::Status Store::SetSessionStatusLocked(const std::string& id,
                                           const std::string& status) {
  if (!ValidSessionStatus(status)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad session status '", status,
                     "'; allowed: \"open\", \"submitted\", \"closed\""));
  }
  ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      SqliteStmt::Prepare(db_, "UPDATE sessions SET status = ?2 WHERE id = ?1",
                          "set session status"));
  stmt.BindText(1, id).BindText(2, status);
  RETURN_IF_ERROR(stmt.Run());
  if (sqlite3_changes(db_) == 0) {
    return absl::NotFoundError(absl::StrCat("no session '", id, "'"));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::Session> Store::GetSession(const std::string& id) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      SqliteStmt::Prepare(db_, absl::StrCat(kSessionColumns, " WHERE id = ?1"),
                          "get session"));
  stmt.BindText(1, id);
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return absl::NotFoundError(absl::StrCat("no session '", id, "'"));
  v1::Session session = ReadSession(stmt);
  if (!Readable(session)) {
    NoteUnreadable("sessions", id, kNotUtf8);
    session.set_id(ScrubUtf8(session.id()));
    session.set_problem(ScrubUtf8(session.problem()));
    session.set_status(ScrubUtf8(session.status()));
    session.set_last_tool(ScrubUtf8(session.last_tool()));
  }
  return session;
}

absl::StatusOr<std::vector<v1::Session>> Store::ListSessions(int limit) {
  if (limit <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ListSessions: limit must be positive, got ", limit));
  }
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      SqliteStmt::Prepare(
          db_,
          absl::StrCat(kSessionColumns,
                       " ORDER BY updated_ms DESC, id DESC LIMIT ?1"),
          "list sessions"));
  stmt.BindInt64(1, limit);
  std::vector<v1::Session> sessions;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    v1::Session session = ReadSession(stmt);
    if (!Readable(session)) {
      NoteUnreadable("sessions", session.id(), kNotUtf8);
      continue;
    }
    sessions.push_back(std::move(session));
  }
  return sessions;
}

absl::StatusOr<std::vector<v1::Turn>> Store::ListTurns(
    const std::string& session_id) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      SqliteStmt::Prepare(
          db_,
          "SELECT session_id, seq, tool, job_id, duration_ms, source_digest, "
          "verdict, created_ms, message, speedup FROM turns WHERE "
          "session_id = ?1 "
          "ORDER BY seq",
          "list turns"));
  stmt.BindText(1, session_id);
  std::vector<v1::Turn> turns;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    v1::Turn turn;
    turn.set_session_id(stmt.ColumnText(0));
    turn.set_seq(static_cast<int32_t>(stmt.ColumnInt64(1)));
    turn.set_tool(stmt.ColumnText(2));
    turn.set_job_id(stmt.ColumnText(3));
    turn.set_duration_ms(stmt.ColumnDouble(4));
    turn.set_source_digest(stmt.ColumnText(5));
    turn.set_verdict(static_cast<v1::Verdict>(stmt.ColumnInt64(6)));
    turn.set_created_unix_ms(stmt.ColumnInt64(7));
    turn.set_message(stmt.ColumnText(8));
    turn.set_speedup(stmt.ColumnDouble(9));
    if (!Readable(turn)) {
      NoteUnreadable("turns", absl::StrCat(session_id, "#", turn.seq()),
                     kNotUtf8);
      continue;
    }
    turns.push_back(std::move(turn));
  }
  return turns;
}

}  // namespace kbench
