// Retention (retention.h) and Store's pruning (Store::Prune, declared in
// store.h; the rest of Store is in store.cc).
#include "server/store/retention.h"

#include <sqlite3.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "server/store/sqlite_stmt.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

// What a prune batch deletes from each table, oldest first. `time` is the
// column the age is read from; `filter` keeps rows that must stay (an
// unfinished job); `digest` is the column naming a source, if any.
struct PrunedTable {
  const char* name;
  const char* time;
  const char* filter;
  const char* digest;
};

// Finished jobs (stage 5 is STAGE_DONE; checked below), turns, the
// compile cache by last use, and sweeps older than every unfinished job (a
// running sweep stays; one whose jobs are gone says so when read).
constexpr PrunedTable kTables[] = {
    {"jobs", "created_ms", "stage = 5", "source_digest"},
    {"turns", "created_ms", "1", "source_digest"},
    {"compile_cache", "last_used_ms", "1", nullptr},
    {"sweeps", "created_ms",
     "created_ms < (SELECT COALESCE(MIN(created_ms), 9223372036854775807) "
     "FROM jobs WHERE stage != 5)",
     nullptr},
};
static_assert(v1::STAGE_DONE == 5, "kTables filters jobs on STAGE_DONE");

const PrunedTable* FindTable(const std::string& name) {
  for (const PrunedTable& t : kTables) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

// Deletes the source `digest` if it is older than `cutoff_ms` and no job or
// turn refers to it.
constexpr char kDeleteSourceIfOrphan[] =
    "DELETE FROM sources WHERE digest = ?1 AND created_ms < ?2 "
    "AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.source_digest = ?1) "
    "AND NOT EXISTS (SELECT 1 FROM turns WHERE turns.source_digest = ?1)";

int64_t AddOrMax(int64_t a, int64_t b) {
  if (b > 0 && a > std::numeric_limits<int64_t>::max() - b) {
    return std::numeric_limits<int64_t>::max();
  }
  return a + b;
}

}  // namespace

absl::StatusOr<int64_t> Store::UsedBytesLocked() {
  int64_t values[3] = {0, 0, 0};
  const char* pragmas[3] = {"PRAGMA page_count", "PRAGMA freelist_count",
                            "PRAGMA page_size"};
  for (int i = 0; i < 3; ++i) {
    ASSIGN_OR_RETURN(SqliteStmt stmt,
                     SqliteStmt::Prepare(db_, pragmas[i], "measure the store"));
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    values[i] = row ? stmt.ColumnInt64(0) : 0;
  }
  return (values[0] - values[1]) * values[2];
}

absl::StatusOr<int64_t> Store::UsedBytes() {
  absl::MutexLock lock(&mu_);
  return UsedBytesLocked();
}

absl::StatusOr<int64_t> Store::PruneBatch(const std::string& table,
                                          int64_t older_than_ms, int limit,
                                          int64_t source_cutoff_ms) {
  const PrunedTable* t = FindTable(table);
  if (t == nullptr) {
    return absl::InternalError(absl::StrCat("prune: unknown table ", table));
  }
  absl::MutexLock lock(&mu_);
  SqliteTransaction txn(db_);
  RETURN_IF_ERROR(txn.Begin(absl::StrCat("prune ", table)));
  int64_t deleted = 0;
  std::set<std::string> digests;
  {
    // Only fixed fragments are joined; the values are bound.
    ASSIGN_OR_RETURN(
        SqliteStmt stmt,
        SqliteStmt::Prepare(
            db_,
            absl::StrCat("DELETE FROM ", t->name,
                         " WHERE rowid IN (SELECT "
                         "rowid FROM ",
                         t->name, " WHERE ", t->filter, " AND ", t->time,
                         " < ?1 ORDER BY ", t->time, " LIMIT ?2) ",
                         "RETURNING ", t->digest != nullptr ? t->digest : "0"),
            absl::StrCat("prune ", table)));
    stmt.BindInt64(1, older_than_ms).BindInt64(2, limit);
    while (true) {
      ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      ++deleted;
      if (t->digest != nullptr) digests.insert(stmt.ColumnText(0));
    }
  }
  int64_t sources = 0;
  for (const std::string& digest : digests) {
    ASSIGN_OR_RETURN(SqliteStmt stmt,
                     SqliteStmt::Prepare(db_, kDeleteSourceIfOrphan,
                                         "prune the sources of pruned rows"));
    stmt.BindText(1, digest).BindInt64(2, source_cutoff_ms);
    RETURN_IF_ERROR(stmt.Run());
    sources += sqlite3_changes(db_);
  }
  RETURN_IF_ERROR(txn.Commit(absl::StrCat("prune ", table)));
  if (table == "jobs") stats_.pruned_jobs += deleted;
  if (table == "turns") stats_.pruned_turns += deleted;
  if (table == "compile_cache") stats_.pruned_compiled += deleted;
  if (table == "sweeps") stats_.pruned_sweeps += deleted;
  stats_.pruned_sources += sources;
  return deleted;
}

absl::StatusOr<int64_t> Store::PruneOrphanSources(int64_t created_before_ms,
                                                  int limit) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      SqliteStmt::Prepare(
          db_,
          "DELETE FROM sources WHERE rowid IN (SELECT rowid FROM sources s "
          "WHERE s.created_ms < ?1 "
          "AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.source_digest = "
          "s.digest) "
          "AND NOT EXISTS (SELECT 1 FROM turns WHERE turns.source_digest = "
          "s.digest) LIMIT ?2)",
          "prune unreferenced sources"));
  stmt.BindInt64(1, created_before_ms).BindInt64(2, limit);
  RETURN_IF_ERROR(stmt.Run());
  const int64_t deleted = sqlite3_changes(db_);
  stats_.pruned_sources += deleted;
  return deleted;
}

absl::StatusOr<Store::PruneStats> Store::Prune(const RetentionPolicy& policy,
                                               int64_t now_unix_ms) {
  PruneStats out;
  ASSIGN_OR_RETURN(out.used_bytes_before, UsedBytes());
  const int limit = std::max(1, policy.batch_rows);
  const int64_t source_cutoff =
      now_unix_ms - absl::ToInt64Milliseconds(policy.source_grace);
  auto count = [&out](const std::string& table, int64_t n) {
    if (table == "jobs") out.jobs += n;
    if (table == "turns") out.turns += n;
    if (table == "compile_cache") out.compiled += n;
    if (table == "sweeps") out.sweeps += n;
  };
  const Stats before = stats();

  // By age.
  if (policy.max_age > absl::ZeroDuration()) {
    const int64_t cutoff =
        now_unix_ms - absl::ToInt64Milliseconds(policy.max_age);
    for (const PrunedTable& t : kTables) {
      while (true) {
        ASSIGN_OR_RETURN(int64_t n,
                         PruneBatch(t.name, cutoff, limit, source_cutoff));
        count(t.name, n);
        if (n < limit) break;
      }
    }
    // Also sources that a failed submit left behind.
    while (true) {
      ASSIGN_OR_RETURN(int64_t n, PruneOrphanSources(source_cutoff, limit));
      if (n < limit) break;
    }
  }

  // By size: the table holding the oldest row loses its rows up to the
  // next table's oldest, a batch at a time, until the store is under 90%
  // of the limit (so that it is not pruned again at the next write).
  if (policy.max_bytes > 0) {
    ASSIGN_OR_RETURN(int64_t used, UsedBytes());
    const int64_t target = policy.max_bytes / 10 * 9;
    const bool over = used > policy.max_bytes;
    while (over && used > target) {
      std::vector<std::pair<int64_t, std::string>> oldest;
      {
        absl::MutexLock lock(&mu_);
        for (const PrunedTable& t : kTables) {
          ASSIGN_OR_RETURN(
              SqliteStmt stmt,
              SqliteStmt::Prepare(
                  db_,
                  absl::StrCat("SELECT ", t.time, " FROM ", t.name, " WHERE ",
                               t.filter, " ORDER BY ", t.time, " LIMIT 1"),
                  "find the oldest row"));
          ASSIGN_OR_RETURN(bool row, stmt.Step());
          if (row) oldest.emplace_back(stmt.ColumnInt64(0), t.name);
        }
      }
      if (oldest.empty()) {
        spdlog::warn(
            "retention: the store holds {} bytes, over --store-max-bytes={}, "
            "but only sessions and unfinished jobs are left to delete",
            used, policy.max_bytes);
        break;
      }
      std::sort(oldest.begin(), oldest.end());
      const int64_t upto = oldest.size() > 1
                               ? AddOrMax(oldest[1].first, 1)
                               : std::numeric_limits<int64_t>::max();
      ASSIGN_OR_RETURN(
          int64_t n, PruneBatch(oldest[0].second, upto, limit, source_cutoff));
      count(oldest[0].second, n);
      if (n == 0) break;
      ASSIGN_OR_RETURN(used, UsedBytes());
    }
  }
  out.sources = stats().pruned_sources - before.pruned_sources;
  ASSIGN_OR_RETURN(out.used_bytes_after, UsedBytes());
  return out;
}

Retention::Retention(const Options& options, Store* store)
    : options_(options), store_(store) {}

Retention::~Retention() { Stop(); }

bool Retention::Limits(const Store::RetentionPolicy& policy) {
  return policy.max_age > absl::ZeroDuration() || policy.max_bytes > 0;
}

void Retention::Start() {
  if (!Limits(options_.policy) || thread_.joinable()) return;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { Loop(); });
}

void Retention::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

int64_t Retention::runs() const {
  absl::MutexLock lock(&mu_);
  return runs_;
}

absl::StatusOr<Store::PruneStats> Retention::RunOnce(absl::Time now) {
  absl::StatusOr<Store::PruneStats> stats =
      store_->Prune(options_.policy, absl::ToUnixMillis(now));
  if (!stats.ok()) {
    spdlog::warn("retention: pruning the store failed: {} (retried in {})",
                 std::string(stats.status().message()),
                 absl::FormatDuration(options_.interval));
  } else if (stats->jobs + stats->turns + stats->sources + stats->compiled +
                 stats->sweeps >
             0) {
    spdlog::info(
        "retention: deleted {} jobs, {} turns, {} sources, {} compile-cache "
        "entries, {} sweeps; store {} -> {} bytes in use",
        stats->jobs, stats->turns, stats->sources, stats->compiled,
        stats->sweeps, stats->used_bytes_before, stats->used_bytes_after);
  }
  absl::MutexLock lock(&mu_);
  ++runs_;
  return stats;
}

void Retention::Loop() {
  while (true) {
    (void)RunOnce(absl::Now());
    absl::MutexLock lock(&mu_);
    auto stop = [this]()
                    ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
    if (mu_.AwaitWithTimeout(absl::Condition(&stop), options_.interval)) {
      return;
    }
  }
}

absl::Status RegisterStoreMetrics(Metrics* metrics, Store* store) {
  RETURN_IF_ERROR(metrics->AddCounterFn(
      "kbench_store_unreadable_rows_total",
      "Store rows that could not be read back (skipped, salvaged or marked "
      "failed).",
      {}, [store] {
        return std::vector<Metrics::Sample>{
            {{}, static_cast<double>(store->stats().unreadable_rows)}};
      }));
  RETURN_IF_ERROR(metrics->AddCounterFn(
      "kbench_store_refused_writes_total",
      "Store writes refused because they would not read back (not UTF-8).", {},
      [store] {
        return std::vector<Metrics::Sample>{
            {{}, static_cast<double>(store->stats().refused_writes)}};
      }));
  RETURN_IF_ERROR(metrics->AddCounterFn(
      "kbench_store_pruned_rows_total", "Rows deleted by retention.", {"table"},
      [store] {
        const Store::Stats s = store->stats();
        return std::vector<Metrics::Sample>{
            {{"jobs"}, static_cast<double>(s.pruned_jobs)},
            {{"turns"}, static_cast<double>(s.pruned_turns)},
            {{"sources"}, static_cast<double>(s.pruned_sources)},
            {{"compile_cache"}, static_cast<double>(s.pruned_compiled)},
            {{"sweeps"}, static_cast<double>(s.pruned_sweeps)}};
      }));
  return metrics->AddGaugeFn(
      "kbench_store_used_bytes",
      "Bytes of database pages in use (freed pages are reused, not "
      "returned).",
      {}, [store] {
        absl::StatusOr<int64_t> used = store->UsedBytes();
        if (!used.ok()) return std::vector<Metrics::Sample>{};
        return std::vector<Metrics::Sample>{{{}, static_cast<double>(*used)}};
      });
}

}  // namespace kbench
