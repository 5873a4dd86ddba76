#include "server/store/sqlite_stmt.h"

#include <sqlite3.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace kbench {

absl::Status SqliteError(sqlite3* db, int rc, absl::string_view purpose) {
  const char* detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  std::string message =
      absl::StrCat("sqlite: ", purpose, ": ", detail, " (code ", rc, ")");
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(absl::StrCat(
          message, "; the database is locked by another connection, retry"));
    default:
      break;
  }
  if (rc == SQLITE_CONSTRAINT_PRIMARYKEY || rc == SQLITE_CONSTRAINT_UNIQUE) {
    return absl::AlreadyExistsError(message);
  }
  return absl::InternalError(message);
}

absl::Status SqliteExec(sqlite3* db, const char* sql,
                        absl::string_view purpose) {
  char* error = nullptr;
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, &error);
  sqlite3_free(error);  // sqlite3_errmsg(db) holds the same text.
  if (rc != SQLITE_OK) return SqliteError(db, rc, purpose);
  return absl::OkStatus();
}

SqliteTransaction::~SqliteTransaction() {
  if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

absl::Status SqliteTransaction::Begin(absl::string_view purpose) {
  RETURN_IF_ERROR(SqliteExec(db_, "BEGIN IMMEDIATE",
                             absl::StrCat("begin transaction to ", purpose)));
  open_ = true;
  return absl::OkStatus();
}

absl::Status SqliteTransaction::Commit(absl::string_view purpose) {
  RETURN_IF_ERROR(SqliteExec(db_, "COMMIT", absl::StrCat("commit ", purpose)));
  open_ = false;
  return absl::OkStatus();
}

absl::StatusOr<SqliteStmt> SqliteStmt::Prepare(sqlite3* db,
                                               absl::string_view sql,
                                               absl::string_view purpose) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()),
                              &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return SqliteError(db, rc, absl::StrCat("prepare ", purpose));
  }
  return SqliteStmt(db, stmt, std::string(purpose));
}

SqliteStmt::SqliteStmt(SqliteStmt&& other) noexcept
    : db_(other.db_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      purpose_(std::move(other.purpose_)),
      bind_status_(std::move(other.bind_status_)) {}

SqliteStmt& SqliteStmt::operator=(SqliteStmt&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
    purpose_ = std::move(other.purpose_);
    bind_status_ = std::move(other.bind_status_);
  }
  return *this;
}

SqliteStmt::~SqliteStmt() { sqlite3_finalize(stmt_); }

void SqliteStmt::NoteBind(int rc, int index) {
  if (rc != SQLITE_OK && bind_status_.ok()) {
    bind_status_ = SqliteError(
        db_, rc, absl::StrCat(purpose_, " (bind parameter ", index, ")"));
  }
}

// An empty string_view may have a null data pointer, which SQLite would bind
// as NULL; bind an empty value instead.
static const char* NonNull(absl::string_view value) {
  return value.data() != nullptr ? value.data() : "";
}

SqliteStmt& SqliteStmt::BindText(int index, absl::string_view value) {
  NoteBind(sqlite3_bind_text64(stmt_, index, NonNull(value), value.size(),
                               SQLITE_TRANSIENT, SQLITE_UTF8),
           index);
  return *this;
}

SqliteStmt& SqliteStmt::BindBlob(int index, absl::string_view value) {
  NoteBind(sqlite3_bind_blob64(stmt_, index, NonNull(value), value.size(),
                               SQLITE_TRANSIENT),
           index);
  return *this;
}

SqliteStmt& SqliteStmt::BindInt64(int index, int64_t value) {
  NoteBind(sqlite3_bind_int64(stmt_, index, value), index);
  return *this;
}

SqliteStmt& SqliteStmt::BindDouble(int index, double value) {
  NoteBind(sqlite3_bind_double(stmt_, index, value), index);
  return *this;
}

absl::StatusOr<bool> SqliteStmt::Step() {
  if (!bind_status_.ok()) return bind_status_;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, rc, purpose_);
}

absl::Status SqliteStmt::Run() {
  while (true) {
    absl::StatusOr<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
  }
}

int64_t SqliteStmt::ColumnInt64(int index) const {
  return sqlite3_column_int64(stmt_, index);
}

double SqliteStmt::ColumnDouble(int index) const {
  return sqlite3_column_double(stmt_, index);
}

std::string SqliteStmt::ColumnText(int index) const {
  const unsigned char* text = sqlite3_column_text(stmt_, index);
  int bytes = sqlite3_column_bytes(stmt_, index);
  if (text == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(text), bytes);
}

absl::string_view SqliteStmt::ColumnBlob(int index) const {
  const void* blob = sqlite3_column_blob(stmt_, index);
  int bytes = sqlite3_column_bytes(stmt_, index);
  if (blob == nullptr) return absl::string_view();
  return absl::string_view(static_cast<const char*>(blob), bytes);
}

}  // namespace kbench
