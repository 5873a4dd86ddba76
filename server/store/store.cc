#include "server/store/store.h"

#include <sqlite3.h>

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "server/store/sqlite_stmt.h"
#include "server/store/store_schema.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

// Binds ?1..?10 of the jobs table: the indexed columns and the job proto.
void BindJobColumns(const v1::Job& job, SqliteStmt* stmt) {
  stmt->BindText(1, job.id())
      .BindInt64(2, job.kind())
      .BindInt64(3, job.stage())
      .BindInt64(4, job.result().verdict())
      .BindText(5, job.session_id())
      .BindText(6, job.problem())
      .BindText(7, job.source_digest())
      .BindInt64(8, job.created_unix_ms())
      .BindInt64(9, job.updated_unix_ms())
      .BindBlob(10, job.SerializeAsString());
}

constexpr int kDefaultPageSize = 20;
constexpr int kMaxPageSize = 200;

template <typename Proto>
absl::Status ParseBlob(absl::string_view blob, Proto* proto,
                       absl::string_view what) {
  if (!proto->ParseFromArray(blob.data(), static_cast<int>(blob.size()))) {
    return absl::DataLossError(
        absl::StrCat("stored ", what, " is corrupt (", blob.size(),
                     " bytes do not parse as ", proto->GetTypeName(), ")"));
  }
  return absl::OkStatus();
}

// The columns a job is salvaged from when its proto does not parse, after
// the proto itself: SELECT job, <kSalvageColumns> FROM jobs.
constexpr char kSalvageColumns[] =
    "id, kind, stage, session_id, problem, source_digest, created_ms, "
    "updated_ms";

// A job rebuilt from the indexed columns at `first` (kSalvageColumns), as
// finished with a DATA_LOSS error. Text is scrubbed to UTF-8.
v1::Job SalvageJob(const SqliteStmt& stmt, int first) {
  v1::Job job;
  job.set_id(ScrubUtf8(stmt.ColumnText(first)));
  const int64_t kind = stmt.ColumnInt64(first + 1);
  if (v1::JobKind_IsValid(static_cast<int>(kind))) {
    job.set_kind(static_cast<v1::JobKind>(kind));
  }
  job.set_session_id(ScrubUtf8(stmt.ColumnText(first + 3)));
  job.set_problem(ScrubUtf8(stmt.ColumnText(first + 4)));
  job.set_source_digest(ScrubUtf8(stmt.ColumnText(first + 5)));
  job.set_created_unix_ms(stmt.ColumnInt64(first + 6));
  job.set_updated_unix_ms(stmt.ColumnInt64(first + 7));
  job.set_finished_unix_ms(job.updated_unix_ms());
  job.set_stage(v1::STAGE_DONE);
  job.set_stage_detail("error");
  v1::JobResult* result = job.mutable_result();
  result->set_verdict(v1::VERDICT_ERROR);
  const std::string message =
      "the stored job could not be read (its row is corrupt or was written "
      "by an incompatible kbd); resubmit the kernel";
  result->mutable_error()->set_code(
      static_cast<int32_t>(absl::StatusCode::kDataLoss));
  result->mutable_error()->set_message(message);
  result->set_message(message);
  return job;
}

// How many unreadable row ids are remembered, so that each is logged once.
constexpr size_t kMaxLoggedUnreadable = 4096;

std::string EncodePageToken(int64_t created_ms, const std::string& id) {
  return absl::WebSafeBase64Escape(absl::StrCat(created_ms, ":", id));
}

absl::Status BadPageToken(const std::string& token) {
  return absl::InvalidArgumentError(absl::StrCat(
      "bad page_token '", token,
      "': pass the next_page_token of the previous ListJobs response "
      "unchanged, or an empty token for the first page"));
}

absl::Status DecodePageToken(const std::string& token, int64_t* created_ms,
                             std::string* id) {
  std::string plain;
  if (!absl::WebSafeBase64Unescape(token, &plain)) return BadPageToken(token);
  size_t colon = plain.find(':');
  if (colon == std::string::npos || colon + 1 == plain.size() ||
      !absl::SimpleAtoi(absl::string_view(plain).substr(0, colon),
                        created_ms)) {
    return BadPageToken(token);
  }
  *id = plain.substr(colon + 1);
  return absl::OkStatus();
}

}  // namespace

bool Store::ParseRow(absl::string_view table, absl::string_view id,
                     absl::string_view blob,
                     google::protobuf::MessageLite* proto) {
  if (logged_unreadable_.count(absl::StrCat(table, "/", id))) {
    ++stats_.unreadable_rows;
    return false;
  }
  if (proto->ParseFromArray(blob.data(), static_cast<int>(blob.size()))) {
    return true;
  }
  NoteUnreadable(table, id,
                 absl::StrCat(blob.size(), " bytes do not parse as ",
                              proto->GetTypeName()));
  return false;
}

void Store::NoteUnreadable(absl::string_view table, absl::string_view id,
                           absl::string_view why) {
  ++stats_.unreadable_rows;
  const std::string key = absl::StrCat(table, "/", id);
  if (logged_unreadable_.count(key)) return;
  if (logged_unreadable_.size() >= kMaxLoggedUnreadable) {
    logged_unreadable_.clear();
  }
  logged_unreadable_.insert(key);
  // The id is escaped: it may hold any bytes, newlines included.
  spdlog::error("store: unreadable {} row '{}': {}", std::string(table),
                absl::CHexEscape(id), std::string(why));
}

absl::Status Store::CheckWritableProto(const google::protobuf::Message& message,
                                       absl::string_view what) {
  std::string bad = FindNonUtf8Field(message);
  if (bad.empty()) return absl::OkStatus();
  ++stats_.refused_writes;
  return absl::InvalidArgumentError(absl::StrCat(
      what, ": field ", bad,
      " is not valid UTF-8, so the stored row could not be read back; the "
      "value must be UTF-8 text (ids: letters, digits and ._:-)"));
}

absl::Status Store::CheckText(absl::string_view text, absl::string_view what) {
  if (IsValidUtf8(text)) return absl::OkStatus();
  ++stats_.refused_writes;
  return absl::InvalidArgumentError(absl::StrCat(
      what,
      " is not valid UTF-8, so it could not be read back; send UTF-8 "
      "text"));
}

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const Options& options) {
  if (options.path.empty()) {
    return absl::InvalidArgumentError(
        "Store::Open: empty database path; give a file path or \":memory:\"");
  }
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(
      options.path.c_str(), &db,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
      nullptr);
  if (rc != SQLITE_OK) {
    absl::Status status = SqliteError(
        db, rc,
        absl::StrCat("open database '", options.path,
                     "' (check that its directory exists and is writable)"));
    sqlite3_close(db);
    return status;
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, options.busy_timeout_ms);
  std::unique_ptr<Store> store(new Store(db, options));
  absl::MutexLock lock(&store->mu_);

  // journal_mode answers with the mode in effect: "memory" for ":memory:",
  // "wal" for a file unless the file system cannot share memory.
  {
    // The first statement that touches the file: say which, and why it
    // may fail (WAL needs to create DB-wal and DB-shm beside it).
    const std::string purpose = absl::StrCat(
        "set journal_mode=WAL on '", options.path,
        "' (its directory must be writable, on a disk that is mounted "
        "read-write and not full)");
    ASSIGN_OR_RETURN(
        SqliteStmt stmt,
        SqliteStmt::Prepare(store->db_, "PRAGMA journal_mode=WAL", purpose));
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    std::string mode = row ? stmt.ColumnText(0) : "";
    if (mode != "wal" && options.path != ":memory:") {
      spdlog::warn("store: database '{}' runs in journal_mode '{}', not wal",
                   options.path, mode);
    }
  }
  RETURN_IF_ERROR(store->Exec("PRAGMA synchronous=NORMAL"));
  RETURN_IF_ERROR(store->Exec("PRAGMA foreign_keys=ON"));
  RETURN_IF_ERROR(store->Migrate());
  return store;
}

Store::~Store() {
  {
    absl::MutexLock lock(&health_write_mu_);
    if (health_db_ != nullptr) sqlite3_close_v2(health_db_);
  }
  absl::MutexLock lock(&mu_);
  sqlite3_close_v2(db_);
}

Store::Stats Store::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

absl::Status Store::Exec(const char* sql) { return SqliteExec(db_, sql, sql); }

absl::Status Store::Migrate() { return MigrateStoreSchema(db_); }

// ---- Jobs.

absl::Status Store::InsertJob(const v1::Job& job,
                              const v1::KernelRequest& request) {
  if (job.id().empty()) {
    return absl::InvalidArgumentError("InsertJob: the job has no id");
  }
  v1::KernelRequest stored_request = request;
  stored_request.clear_source();
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckWritableProto(job, "InsertJob"));
  RETURN_IF_ERROR(CheckWritableProto(stored_request, "InsertJob (request)"));
  ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      SqliteStmt::Prepare(
          db_,
          "INSERT INTO jobs(id, kind, stage, verdict, session_id, problem, "
          "source_digest, created_ms, updated_ms, job, request) "
          "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
          "insert job"));
  BindJobColumns(job, &stmt);
  stmt.BindBlob(11, stored_request.SerializeAsString());
  absl::Status status = stmt.Run();
  if (absl::IsAlreadyExists(status)) {
    return absl::AlreadyExistsError(
        absl::StrCat("job '", job.id(), "' already exists"));
  }
  return status;
}

absl::Status Store::UpdateJob(const v1::Job& job) {
  absl::MutexLock lock(&mu_);
  return UpdateJobLocked(job);
}

absl::Status Store::FinishJob(const v1::Job& job, const SessionTurn* turn) {
  absl::MutexLock lock(&mu_);
  SqliteTransaction txn(db_);
  RETURN_IF_ERROR(txn.Begin("finish job"));
  RETURN_IF_ERROR(UpdateJobLocked(job));
  if (turn != nullptr) {
    RETURN_IF_ERROR(AppendTurnLocked(turn->turn).status());
    if (!turn->status.empty()) {
      RETURN_IF_ERROR(
          SetSessionStatusLocked(turn->turn.session_id(), turn->status));
    }
  }
  return txn.Commit("finish job");
}

absl::Status Store::UpdateJobLocked(const v1::Job& job) {
  RETURN_IF_ERROR(CheckWritableProto(job, "UpdateJob"));
  logged_unreadable_.erase(absl::StrCat("jobs/", job.id()));
  ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      SqliteStmt::Prepare(
          db_,
          "UPDATE jobs SET kind = ?2, stage = ?3, verdict = ?4, "
          "session_id = ?5, problem = ?6, source_digest = ?7, "
          "created_ms = ?8, updated_ms = ?9, job = ?10 WHERE id = ?1",
          "update job"));
  BindJobColumns(job, &stmt);
  RETURN_IF_ERROR(stmt.Run());
  if (sqlite3_changes(db_) == 0) {
    return absl::NotFoundError(absl::StrCat("no job '", job.id(), "'"));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::Job> Store::GetJob(const std::string& id) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      SqliteStmt::Prepare(db_,
                          absl::StrCat("SELECT job, ", kSalvageColumns,
                                       " FROM jobs WHERE id = ?1"),
                          "get job"));
  stmt.BindText(1, id);
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return absl::NotFoundError(absl::StrCat("no job '", id, "'"));
  v1::Job job;
  if (!ParseRow("jobs", id, stmt.ColumnBlob(0), &job)) {
    return SalvageJob(stmt, 1);
  }
  return job;
}

absl::StatusOr<v1::KernelRequest> Store::GetJobRequest(const std::string& id) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      SqliteStmt::Prepare(db_, "SELECT request FROM jobs WHERE id = ?1",
                          "get job request"));
  stmt.BindText(1, id);
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return absl::NotFoundError(absl::StrCat("no job '", id, "'"));
  v1::KernelRequest request;
  RETURN_IF_ERROR(ParseBlob(stmt.ColumnBlob(0), &request,
                            absl::StrCat("request of job '", id, "'")));
  return request;
}

absl::StatusOr<Store::JobPage> Store::ListJobs(const JobQuery& query) {
  int page_size = query.page_size == 0
                      ? kDefaultPageSize
                      : std::clamp(query.page_size, 1, kMaxPageSize);
  int64_t after_created_ms = 0;
  std::string after_id;
  if (!query.page_token.empty()) {
    RETURN_IF_ERROR(
        DecodePageToken(query.page_token, &after_created_ms, &after_id));
  }
  // Only fixed fragments are joined; every value is a bound parameter.
  std::string sql = "SELECT job, created_ms, id FROM jobs WHERE 1";
  if (!query.session_id.empty()) sql += " AND session_id = ?1";
  if (query.stage != v1::STAGE_UNSPECIFIED) sql += " AND stage = ?2";
  if (!query.page_token.empty()) sql += " AND (created_ms, id) < (?3, ?4)";
  sql += " ORDER BY created_ms DESC, id DESC LIMIT ?5";

  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(SqliteStmt stmt, SqliteStmt::Prepare(db_, sql, "list jobs"));
  if (!query.session_id.empty()) stmt.BindText(1, query.session_id);
  if (query.stage != v1::STAGE_UNSPECIFIED) stmt.BindInt64(2, query.stage);
  if (!query.page_token.empty()) {
    stmt.BindInt64(3, after_created_ms).BindText(4, after_id);
  }
  // One extra row tells whether another page follows.
  stmt.BindInt64(5, page_size + 1);
  JobPage page;
  int64_t last_created_ms = 0;
  std::string last_id;
  int rows = 0;  // Rows of this page read, unreadable ones included.
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    if (rows == page_size) {
      page.next_page_token = EncodePageToken(last_created_ms, last_id);
      break;
    }
    ++rows;
    last_created_ms = stmt.ColumnInt64(1);
    last_id = stmt.ColumnText(2);
    v1::Job job;
    if (!ParseRow("jobs", last_id, stmt.ColumnBlob(0), &job)) continue;
    page.jobs.push_back(std::move(job));
  }
  return page;
}

absl::StatusOr<std::vector<v1::Job>> Store::ListUnfinishedJobs() {
  absl::MutexLock lock(&mu_);
  std::vector<v1::Job> jobs;
  // Rows that do not parse, with the raw id that finds each again.
  std::vector<std::pair<std::string, v1::Job>> unreadable;
  {
    ASSIGN_OR_RETURN(
        SqliteStmt stmt,
        SqliteStmt::Prepare(db_,
                            absl::StrCat("SELECT job, ", kSalvageColumns,
                                         " FROM jobs WHERE stage != ?1 "
                                         "ORDER BY created_ms ASC, id ASC"),
                            "list unfinished jobs"));
    stmt.BindInt64(1, v1::STAGE_DONE);
    while (true) {
      ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      v1::Job job;
      std::string id = stmt.ColumnText(1);
      if (ParseRow("jobs", id, stmt.ColumnBlob(0), &job)) {
        jobs.push_back(std::move(job));
        continue;
      }
      unreadable.emplace_back(std::move(id), SalvageJob(stmt, 1));
    }
  }
  // Rewritten as failed, so that they are neither re-run nor stuck. The
  // row keeps its raw id (the key callers know), the proto a scrubbed one.
  for (const auto& [raw_id, salvaged] : unreadable) {
    ASSIGN_OR_RETURN(
        SqliteStmt update,
        SqliteStmt::Prepare(
            db_,
            "UPDATE jobs SET kind = ?2, stage = ?3, verdict = ?4, "
            "session_id = ?5, problem = ?6, source_digest = ?7, "
            "created_ms = ?8, updated_ms = ?9, job = ?10 WHERE id = ?1",
            "mark an unreadable job failed"));
    BindJobColumns(salvaged, &update);
    update.BindText(1, raw_id);
    RETURN_IF_ERROR(update.Run());
    ++stats_.repaired_jobs;
    logged_unreadable_.erase(absl::StrCat("jobs/", raw_id));
    spdlog::warn(
        "store: unfinished job '{}' could not be read; marked failed "
        "(DATA_LOSS)",
        absl::CHexEscape(raw_id));
  }
  return jobs;
}

}  // namespace kbench
