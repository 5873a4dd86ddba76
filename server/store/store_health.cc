// Store::CheckWritable (the rest of Store is in store.cc): what /healthz
// asks of the store.
#include <sqlite3.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "server/store/sqlite_stmt.h"
#include "server/store/store.h"
#include "spdlog/spdlog.h"

namespace kbench {

absl::Status Store::CheckWritable() { return CheckWritableAt(absl::Now()); }

absl::Status Store::CheckWritableAt(absl::Time now) {
  {
    absl::MutexLock lock(&health_mu_);
    const bool fresh =
        now >= health_checked_ && now - health_checked_ < options_.health_cache;
    // While one caller refreshes, the others answer from the last result
    // instead of queueing behind its write (up to health_timeout_ms).
    const bool refreshing =
        health_checking_ && health_checked_ != absl::InfinitePast();
    if (fresh || refreshing) return health_status_;
    health_checking_ = true;
  }
  absl::Status status = absl::OkStatus();
  {
    absl::MutexLock lock(&health_write_mu_);
    status = CheckFreeSpace();
    if (status.ok()) status = WriteHealthRow(absl::ToUnixMillis(now));
  }
  absl::MutexLock lock(&health_mu_);
  // Logged when it changes, not at every probe.
  if (status.code() != health_status_.code() ||
      health_checked_ == absl::InfinitePast()) {
    if (!status.ok()) {
      spdlog::error("store health: {}", std::string(status.message()));
    } else if (health_checked_ != absl::InfinitePast()) {
      spdlog::info("store health: the store can be written again");
    }
  }
  health_status_ = status;
  health_checked_ = now;
  health_checking_ = false;
  return status;
}

absl::Status Store::CheckFreeSpace() const {
  if (options_.path == ":memory:" || options_.min_free_bytes <= 0) {
    return absl::OkStatus();
  }
  const std::filesystem::path dir =
      std::filesystem::absolute(options_.path).parent_path();
  struct statvfs fs {};
  // When statvfs fails, the write below tells.
  if (statvfs(dir.c_str(), &fs) != 0) return absl::OkStatus();
  // Root may also write into the blocks reserved for root.
  const uint64_t blocks = geteuid() == 0 ? fs.f_bfree : fs.f_bavail;
  const uint64_t free_bytes = blocks * fs.f_frsize;
  if (free_bytes >= static_cast<uint64_t>(options_.min_free_bytes)) {
    return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "the store cannot be written: the file system holding ", dir.string(),
      " has ", free_bytes, " bytes free, under the ", options_.min_free_bytes,
      " kbd needs; free disk space there (or lower --store-max-bytes so "
      "retention prunes more)"));
}

// The upsert runs on a connection of its own (for a file), so that it waits
// only for SQLite's lock, for at most health_timeout_ms, and not behind the
// calls queued on mu_. Callers hold health_write_mu_.
absl::Status Store::WriteHealthRow(int64_t now_ms) {
  constexpr char kUpsert[] =
      "INSERT INTO health(id, checked_ms, writes) VALUES(1, ?1, 1) "
      "ON CONFLICT(id) DO UPDATE SET checked_ms = excluded.checked_ms, "
      "writes = health.writes + 1";
  auto unwritable = [this](const absl::Status& s) {
    return absl::UnavailableError(absl::StrCat(
        "the store cannot be written (", s.message(),
        "); check that the disk holding ", options_.path,
        " has space, is mounted read-write and that no other process holds "
        "the database locked"));
  };
  if (options_.path == ":memory:") {
    absl::MutexLock lock(&mu_);
    ASSIGN_OR_RETURN(SqliteStmt stmt,
                     SqliteStmt::Prepare(db_, kUpsert, "write health row"));
    stmt.BindInt64(1, now_ms);
    absl::Status s = stmt.Run();
    return s.ok() ? s : unwritable(s);
  }
  if (health_db_ == nullptr) {
    sqlite3* db = nullptr;
    const int rc =
        sqlite3_open_v2(options_.path.c_str(), &db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, nullptr);
    if (rc != SQLITE_OK) {
      absl::Status s = SqliteError(db, rc, "open the database");
      sqlite3_close(db);
      return unwritable(s);
    }
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, options_.health_timeout_ms);
    health_db_ = db;
  }
  if (sqlite3_db_readonly(health_db_, "main") == 1) {
    return unwritable(absl::FailedPreconditionError("opened read-only"));
  }
  absl::StatusOr<SqliteStmt> stmt =
      SqliteStmt::Prepare(health_db_, kUpsert, "write health row");
  if (stmt.ok()) stmt->BindInt64(1, now_ms);
  absl::Status s = stmt.ok() ? stmt->Run() : stmt.status();
  if (s.ok()) return s;
  // A fresh connection next time: this one may be in a broken state
  // (close_v2 waits for `stmt` to be finalized).
  sqlite3_close_v2(health_db_);
  health_db_ = nullptr;
  return unwritable(s);
}

}  // namespace kbench
