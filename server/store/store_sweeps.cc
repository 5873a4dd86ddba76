// Store's sweeps (the rest of Store is in store.cc).
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "server/store/sqlite_stmt.h"
#include "server/store/store.h"

namespace kbench {

absl::Status Store::InsertSweep(const v1::Sweep& sweep) {
  if (sweep.id().empty()) {
    return absl::InvalidArgumentError("InsertSweep: the sweep has no id");
  }
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckWritableProto(sweep, "InsertSweep"));
  ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      SqliteStmt::Prepare(db_,
                          "INSERT INTO sweeps(id, suite, created_ms, sweep) "
                          "VALUES(?1, ?2, ?3, ?4)",
                          "insert sweep"));
  stmt.BindText(1, sweep.id())
      .BindText(2, sweep.suite())
      .BindInt64(3, sweep.created_unix_ms())
      .BindBlob(4, sweep.SerializeAsString());
  absl::Status status = stmt.Run();
  if (absl::IsAlreadyExists(status)) {
    return absl::AlreadyExistsError(
        absl::StrCat("sweep '", sweep.id(), "' already exists"));
  }
  return status;
}

absl::StatusOr<v1::Sweep> Store::GetSweep(const std::string& id) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      SqliteStmt::Prepare(db_, "SELECT sweep FROM sweeps WHERE id = ?1",
                          "get sweep"));
  stmt.BindText(1, id);
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return absl::NotFoundError(absl::StrCat("no sweep '", id, "'"));
  v1::Sweep sweep;
  if (!ParseRow("sweeps", id, stmt.ColumnBlob(0), &sweep)) {
    return absl::DataLossError(
        absl::StrCat("the stored sweep '", id,
                     "' could not be read; its jobs are still listed by "
                     "ListJobs"));
  }
  return sweep;
}

}  // namespace kbench
