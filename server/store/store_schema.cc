#include "server/store/store_schema.h"

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kbench/v1/kbench.pb.h"
#include "server/store/sqlite_stmt.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

// Version 1 of the schema. Protos are stored serialized; the columns beside
// them are copies of the fields that queries filter or sort on.
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE jobs(
  id TEXT PRIMARY KEY NOT NULL,
  kind INTEGER NOT NULL,
  stage INTEGER NOT NULL,
  verdict INTEGER NOT NULL,
  session_id TEXT NOT NULL,
  problem TEXT NOT NULL,
  source_digest TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  job BLOB NOT NULL,
  request BLOB NOT NULL);
CREATE INDEX jobs_by_created ON jobs(created_ms DESC, id DESC);
CREATE INDEX jobs_by_session ON jobs(session_id, created_ms DESC, id DESC);
CREATE INDEX jobs_by_stage ON jobs(stage, created_ms DESC, id DESC);
CREATE TABLE sources(
  digest TEXT PRIMARY KEY NOT NULL,
  text TEXT NOT NULL,
  created_ms INTEGER NOT NULL);
CREATE TABLE compile_cache(
  key TEXT PRIMARY KEY NOT NULL,
  report BLOB NOT NULL,
  cubin BLOB NOT NULL,
  created_ms INTEGER NOT NULL,
  last_used_ms INTEGER NOT NULL);
CREATE INDEX compile_cache_by_last_used ON compile_cache(last_used_ms);
CREATE TABLE sessions(
  id TEXT PRIMARY KEY NOT NULL,
  problem TEXT NOT NULL,
  status TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  turns INTEGER NOT NULL DEFAULT 0);
CREATE INDEX sessions_by_updated ON sessions(updated_ms DESC, id DESC);
CREATE TABLE turns(
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  tool TEXT NOT NULL,
  job_id TEXT NOT NULL,
  duration_ms REAL NOT NULL,
  source_digest TEXT NOT NULL,
  verdict INTEGER NOT NULL,
  created_ms INTEGER NOT NULL,
  message TEXT NOT NULL,
  PRIMARY KEY(session_id, seq));
)sql";

// Version 2: indexes that retention (server/store/retention.cc) deletes by —
// oldest turns first, and sources that no job or turn references — and the
// one-row table Store::CheckWritable writes to.
constexpr char kSchemaV2[] = R"sql(
CREATE INDEX jobs_by_source ON jobs(source_digest);
CREATE INDEX turns_by_created ON turns(created_ms);
CREATE INDEX turns_by_source ON turns(source_digest);
CREATE INDEX sources_by_created ON sources(created_ms);
CREATE TABLE health(
  id INTEGER PRIMARY KEY NOT NULL CHECK(id = 1),
  checked_ms INTEGER NOT NULL,
  writes INTEGER NOT NULL DEFAULT 0);
)sql";

// Version 3: each session's summary (best speedup, last tool and verdict)
// is kept in its row, written with each turn, so that listing sessions is
// one query; each turn keeps its speedup. Existing rows are filled by
// BackfillSessionSummaries.
constexpr char kSchemaV3[] = R"sql(
ALTER TABLE turns ADD COLUMN speedup REAL NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN best_speedup REAL NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN last_tool TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN last_verdict INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 4: sweeps (a batch of jobs, one per problem of a suite). The
// row holds the sweep as made: its rows name the problems and jobs; their
// states are read from the jobs.
constexpr char kSchemaV4[] = R"sql(
CREATE TABLE sweeps(
  id TEXT PRIMARY KEY NOT NULL,
  suite TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  sweep BLOB NOT NULL);
CREATE INDEX sweeps_by_created ON sweeps(created_ms);
)sql";

// Fills the version-3 columns of rows written before it: a timed turn that
// passed takes the speedup of its job (a job row that does not parse, or
// that did not pass, leaves 0), and each session its best speedup and its
// last turn's tool and verdict.
absl::Status BackfillSessionSummaries(sqlite3* db) {
  std::vector<std::pair<std::string, int64_t>> turns;
  std::vector<double> speedups;
  {
    ASSIGN_OR_RETURN(
        SqliteStmt stmt,
        SqliteStmt::Prepare(
            db,
            "SELECT t.session_id, t.seq, j.job FROM turns t JOIN jobs j ON "
            "j.id = t.job_id WHERE t.verdict = 1 AND t.tool IN "
            "('submit_kernel', 'profile_kernel')",
            "read timed turns"));
    while (true) {
      ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      v1::Job job;
      const std::string blob(stmt.ColumnBlob(2));
      if (!job.ParseFromString(blob) ||
          job.result().verdict() != v1::VERDICT_PASSED) {
        continue;
      }
      const double speedup = job.result().timing().speedup();
      if (!(speedup > 0) || speedup > 1e6) continue;
      turns.emplace_back(stmt.ColumnText(0), stmt.ColumnInt64(1));
      speedups.push_back(speedup);
    }
  }
  for (size_t i = 0; i < turns.size(); ++i) {
    ASSIGN_OR_RETURN(
        SqliteStmt stmt,
        SqliteStmt::Prepare(
            db,
            "UPDATE turns SET speedup = ?3 WHERE session_id = ?1 AND seq = ?2",
            "backfill turn speedup"));
    stmt.BindText(1, turns[i].first)
        .BindInt64(2, turns[i].second)
        .BindDouble(3, speedups[i]);
    RETURN_IF_ERROR(stmt.Run());
  }
  return SqliteExec(db, R"sql(
UPDATE sessions SET
  best_speedup = COALESCE(
      (SELECT MAX(speedup) FROM turns WHERE session_id = sessions.id), 0),
  last_tool = COALESCE((SELECT tool FROM turns WHERE session_id = sessions.id
                        ORDER BY seq DESC LIMIT 1), ''),
  last_verdict = COALESCE((SELECT verdict FROM turns
                           WHERE session_id = sessions.id
                           ORDER BY seq DESC LIMIT 1), 0);
)sql",
                    "backfill session summaries");
}

absl::StatusOr<int64_t> ReadUserVersion(sqlite3* db) {
  ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      SqliteStmt::Prepare(db, "PRAGMA user_version", "read schema version"));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  return row ? stmt.ColumnInt64(0) : 0;
}

}  // namespace

absl::Status MigrateStoreSchema(sqlite3* db) {
  SqliteTransaction txn(db);
  RETURN_IF_ERROR(txn.Begin("migrate the schema"));
  // Read inside the transaction: another process may have migrated first.
  ASSIGN_OR_RETURN(int64_t version, ReadUserVersion(db));
  if (version > kStoreSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "database schema version ", version, " is newer than this kbd ",
        "supports (", kStoreSchemaVersion,
        "); upgrade kbd or point it at another data directory"));
  }
  if (version < 1) {
    RETURN_IF_ERROR(SqliteExec(db, kSchemaV1, "create schema version 1"));
  }
  if (version < 2) {
    RETURN_IF_ERROR(SqliteExec(db, kSchemaV2, "migrate schema to version 2"));
  }
  if (version < 3) {
    RETURN_IF_ERROR(SqliteExec(db, kSchemaV3, "migrate schema to version 3"));
    RETURN_IF_ERROR(BackfillSessionSummaries(db));
  }
  if (version < 4) {
    RETURN_IF_ERROR(SqliteExec(db, kSchemaV4, "migrate schema to version 4"));
  }
  // Later versions add their `if (version < N)` steps here.
  if (version == kStoreSchemaVersion) return absl::OkStatus();
  RETURN_IF_ERROR(SqliteExec(
      db, absl::StrCat("PRAGMA user_version=", kStoreSchemaVersion).c_str(),
      "set schema version"));
  RETURN_IF_ERROR(txn.Commit("schema migration"));
  spdlog::info("store: schema migrated from version {} to {}", version,
               kStoreSchemaVersion);
  return absl::OkStatus();
}

}  // namespace kbench
