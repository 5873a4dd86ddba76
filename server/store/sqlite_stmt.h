// SqliteStmt: an RAII owner of one prepared SQLite statement, with bound
// parameters and typed column readers. Beside it: SqliteError, which turns a
// SQLite result code into an absl::Status, SqliteExec, and
// SqliteTransaction, an RAII write transaction.
//
// Ownership: a SqliteStmt owns its sqlite3_stmt (finalized by the destructor)
// but not the connection, which must outlive it; likewise a
// SqliteTransaction.
// Thread safety: none; a statement or transaction is used by one thread at a
// time, under whatever lock guards its connection.
#ifndef KBENCH_SERVER_STORE_SQLITE_STMT_H_
#define KBENCH_SERVER_STORE_SQLITE_STMT_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct sqlite3;
struct sqlite3_stmt;

namespace kbench {

// The Status for a failed SQLite call on `db` with (extended) result code
// `rc`, naming what the statement was for:
//   SQLITE_BUSY / SQLITE_LOCKED          -> Unavailable (retry later);
//   primary-key or unique constraint     -> AlreadyExists;
//   anything else                        -> Internal.
// The message holds `purpose`, sqlite3_errmsg(db) and the code.
absl::Status SqliteError(sqlite3* db, int rc, absl::string_view purpose);

// Runs `sql` (one or more statements without parameters) on `db`.
absl::Status SqliteExec(sqlite3* db, const char* sql,
                        absl::string_view purpose);

// A write transaction: Begin issues BEGIN IMMEDIATE, which takes the write
// lock at once (waiting up to the busy timeout), so a read-then-write inside
// it cannot race another connection. Rolled back by the destructor unless
// committed.
class SqliteTransaction {
 public:
  explicit SqliteTransaction(sqlite3* db) : db_(db) {}
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;
  ~SqliteTransaction();

  // `purpose` names the transaction in error messages.
  absl::Status Begin(absl::string_view purpose);
  absl::Status Commit(absl::string_view purpose);

 private:
  sqlite3* db_;
  bool open_ = false;
};

class SqliteStmt {
 public:
  // Compiles one SQL statement. `purpose` (e.g. "insert job") names it in
  // error messages.
  static absl::StatusOr<SqliteStmt> Prepare(sqlite3* db, absl::string_view sql,
                                            absl::string_view purpose);

  SqliteStmt(SqliteStmt&& other) noexcept;
  SqliteStmt& operator=(SqliteStmt&& other) noexcept;
  SqliteStmt(const SqliteStmt&) = delete;
  SqliteStmt& operator=(const SqliteStmt&) = delete;
  ~SqliteStmt();

  // Bind parameter `index` (1-based). Values are copied. A failed bind is
  // remembered and returned by the next Step or Run.
  SqliteStmt& BindText(int index, absl::string_view value);
  SqliteStmt& BindBlob(int index, absl::string_view value);
  SqliteStmt& BindInt64(int index, int64_t value);
  SqliteStmt& BindDouble(int index, double value);

  // Advances: true when a row is ready to read, false when done.
  absl::StatusOr<bool> Step();
  // Steps until done, ignoring any rows.
  absl::Status Run();

  // Readers of column `index` (0-based) of the current row. NULL reads as
  // 0 or "".
  int64_t ColumnInt64(int index) const;
  double ColumnDouble(int index) const;
  std::string ColumnText(int index) const;
  // A view of the column's bytes, valid until the next Step or destruction.
  absl::string_view ColumnBlob(int index) const;

 private:
  SqliteStmt(sqlite3* db, sqlite3_stmt* stmt, std::string purpose)
      : db_(db), stmt_(stmt), purpose_(std::move(purpose)) {}
  void NoteBind(int rc, int index);

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string purpose_;
  absl::Status bind_status_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_STORE_SQLITE_STMT_H_
