// Store's sources and compile cache (the rest of Store is in store.cc).
#include <optional>
#include <string>
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

}  // namespace

// ---- Sources.

absl::Status Store::PutSource(const std::string& digest,
                              const std::string& text) {
  if (digest.empty()) {
    return absl::InvalidArgumentError("PutSource: empty digest");
  }
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckText(digest, "PutSource: the digest"));
  RETURN_IF_ERROR(CheckText(text, "PutSource: the source"));
  ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      SqliteStmt::Prepare(db_,
                          "INSERT OR IGNORE INTO sources(digest, text, "
                          "created_ms) VALUES(?1, ?2, ?3)",
                          "put source"));
  stmt.BindText(1, digest).BindText(2, text).BindInt64(3, NowMs());
  return stmt.Run();
}

absl::StatusOr<std::string> Store::GetSource(const std::string& digest) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      SqliteStmt::Prepare(db_, "SELECT text FROM sources WHERE digest = ?1",
                          "get source"));
  stmt.BindText(1, digest);
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) {
    return absl::NotFoundError(
        absl::StrCat("no source with digest '", digest, "'"));
  }
  return stmt.ColumnText(0);
}

// ---- Compile cache.

absl::Status Store::PutCompiled(const std::string& key,
                                const v1::CompileReport& report,
                                const std::string& cubin) {
  if (key.empty()) {
    return absl::InvalidArgumentError("PutCompiled: empty cache key");
  }
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(CheckWritableProto(report, "PutCompiled"));
  logged_unreadable_.erase(absl::StrCat("compile_cache/", key));
  ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      SqliteStmt::Prepare(db_,
                          "INSERT OR REPLACE INTO compile_cache(key, report, "
                          "cubin, created_ms, last_used_ms) "
                          "VALUES(?1, ?2, ?3, ?4, ?4)",
                          "put compile cache entry"));
  stmt.BindText(1, key)
      .BindBlob(2, report.SerializeAsString())
      .BindBlob(3, cubin)
      .BindInt64(4, NowMs());
  return stmt.Run();
}

absl::StatusOr<std::optional<Store::CompiledEntry>> Store::GetCompiled(
    const std::string& key) {
  absl::MutexLock lock(&mu_);
  CompiledEntry entry;
  {
    ASSIGN_OR_RETURN(
        SqliteStmt stmt,
        SqliteStmt::Prepare(
            db_, "SELECT report, cubin FROM compile_cache WHERE key = ?1",
            "get compile cache entry"));
    stmt.BindText(1, key);
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return std::optional<CompiledEntry>();
    if (!ParseRow("compile_cache", key, stmt.ColumnBlob(0), &entry.report)) {
      // A miss: the compile runs again and PutCompiled replaces the row.
      return std::optional<CompiledEntry>();
    }
    entry.cubin = std::string(stmt.ColumnBlob(1));
  }
  ASSIGN_OR_RETURN(
      SqliteStmt touch,
      SqliteStmt::Prepare(
          db_, "UPDATE compile_cache SET last_used_ms = ?2 WHERE key = ?1",
          "touch compile cache entry"));
  touch.BindText(1, key).BindInt64(2, NowMs());
  RETURN_IF_ERROR(touch.Run());
  return std::optional<CompiledEntry>(std::move(entry));
}

}  // namespace kbench
