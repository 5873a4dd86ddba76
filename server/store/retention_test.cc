// Tests of retention (server/store/retention.h): Store::Prune with an explicit
// `now` (no waiting for 30 days) deletes finished jobs, turns, unreferenced
// sources and compile-cache entries by age and, past the size limit, oldest
// first; keeps sessions' summary rows, unfinished jobs and sources still
// referenced; never reuses a turn's seq. Also the Retention thread, the
// store metrics and the schema migration from version 1.
#include "server/store/retention.h"

#include <sqlite3.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/metrics.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/store.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kDay = 24 * 3600 * 1000LL;
constexpr int64_t kNow = 1'800'000'000'000LL;  // An explicit clock.

int64_t QueryInt(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  int64_t v = -1;
  if (sqlite3_step(stmt) == SQLITE_ROW) v = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return v;
}

void ExecRaw(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

class RetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Store::Options options;
    options.path = path_;
    auto store = Store::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  // A job created at `created_ms` referring to source `digest` (stored
  // with created time `created_ms` too).
  void AddJob(const std::string& id, int64_t created_ms,
              const std::string& digest, v1::Stage stage = v1::STAGE_DONE,
              size_t payload = 0) {
    v1::Job job;
    job.set_id(id);
    job.set_kind(v1::JOB_KIND_COMPILE);
    job.set_stage(stage);
    job.set_source_digest(digest);
    job.set_created_unix_ms(created_ms);
    job.set_updated_unix_ms(created_ms);
    job.mutable_result()->set_message(std::string(payload, 'r'));
    ASSERT_TRUE(store_->PutSource(digest, "source of " + digest).ok());
    ExecRaw(path_, absl::StrCat("UPDATE sources SET created_ms = ", created_ms,
                                " WHERE digest = '", digest, "'"));
    ASSERT_TRUE(store_->InsertJob(job, v1::KernelRequest()).ok());
  }
  void AddTurn(const std::string& session, int64_t created_ms,
               const std::string& digest = "") {
    v1::Turn turn;
    turn.set_session_id(session);
    turn.set_tool("compile_kernel");
    turn.set_created_unix_ms(created_ms);
    turn.set_source_digest(digest);
    ASSERT_TRUE(store_->AppendTurn(turn).ok());
  }
  void AddCompiled(const std::string& key, int64_t last_used_ms,
                   size_t cubin_bytes = 16) {
    ASSERT_TRUE(store_
                    ->PutCompiled(key, v1::CompileReport(),
                                  std::string(cubin_bytes, 'c'))
                    .ok());
    ExecRaw(path_, absl::StrCat("UPDATE compile_cache SET created_ms = ",
                                last_used_ms, ", last_used_ms = ", last_used_ms,
                                " WHERE key = '", key, "'"));
  }
  bool HasJob(const std::string& id) { return store_->GetJob(id).ok(); }
  bool HasSource(const std::string& d) { return store_->GetSource(d).ok(); }
  bool HasCompiled(const std::string& key) {
    auto e = store_->GetCompiled(key);
    return e.ok() && e->has_value();
  }
  static Store::RetentionPolicy AgeOnly(int days) {
    Store::RetentionPolicy p;
    p.max_age = absl::Hours(24 * days);
    p.max_bytes = 0;
    return p;
  }

  testing::TempDir dir_;
  std::string path_ = dir_.path() + "/kbd.db";
  std::unique_ptr<Store> store_;
};

TEST_F(RetentionTest, AgePrunesFinishedJobsButKeepsUnfinishedOnes) {
  AddJob("old-done", kNow - 40 * kDay, "d1");
  AddJob("old-running", kNow - 40 * kDay, "d2", v1::STAGE_RUNNING);
  AddJob("new-done", kNow - 1 * kDay, "d3");
  auto stats = store_->Prune(AgeOnly(30), kNow);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->jobs, 1);
  EXPECT_FALSE(HasJob("old-done"));
  EXPECT_TRUE(HasJob("old-running"));
  EXPECT_TRUE(HasJob("new-done"));
  // d1 went with its only job; d2's job is kept, old as it is.
  EXPECT_FALSE(HasSource("d1"));
  EXPECT_TRUE(HasSource("d2"));
  EXPECT_TRUE(HasSource("d3"));
  EXPECT_EQ(stats->sources, 1);
  EXPECT_EQ(store_->stats().pruned_jobs, 1);
  // Nothing more to do at the same time.
  stats = store_->Prune(AgeOnly(30), kNow);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->jobs + stats->sources, 0);
}

// Old sweeps go by age, except one made after a job still unfinished
// (its sweep may still be running).
TEST_F(RetentionTest, OldSweepsGoButNotOnesNewerThanAnUnfinishedJob) {
  auto sweep = [this](const std::string& id, int64_t created_ms) {
    v1::Sweep s;
    s.set_id(id);
    s.set_suite("core");
    s.set_created_unix_ms(created_ms);
    ASSERT_TRUE(store_->InsertSweep(s).ok());
  };
  sweep("sw-old", kNow - 50 * kDay);
  AddJob("running", kNow - 45 * kDay, "d1", v1::STAGE_RUNNING);
  sweep("sw-running", kNow - 40 * kDay);
  sweep("sw-new", kNow - kDay);
  auto stats = store_->Prune(AgeOnly(30), kNow);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->sweeps, 1);
  EXPECT_EQ(store_->stats().pruned_sweeps, 1);
  EXPECT_EQ(store_->GetSweep("sw-old").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(store_->GetSweep("sw-running").ok());
  EXPECT_TRUE(store_->GetSweep("sw-new").ok());
}

TEST_F(RetentionTest, OldTurnsGoSessionSummariesStayAndSeqIsNeverReused) {
  AddTurn("s-1", kNow - 45 * kDay, "ds");
  AddTurn("s-1", kNow - 44 * kDay);
  AddTurn("s-2", kNow - 40 * kDay);
  AddTurn("s-2", kNow - 2 * kDay, "ds");
  ASSERT_TRUE(store_->PutSource("ds", "turn source").ok());
  ExecRaw(path_, "UPDATE sources SET created_ms = 0");
  auto stats = store_->Prune(AgeOnly(30), kNow);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->turns, 3);
  EXPECT_TRUE(store_->ListTurns("s-1")->empty());
  ASSERT_EQ(store_->ListTurns("s-2")->size(), 1u);
  // The summary rows stay, with their counts.
  auto s1 = store_->GetSession("s-1");
  ASSERT_TRUE(s1.ok()) << s1.status();
  EXPECT_EQ(s1->turns(), 2);
  // The kept turn still refers to "ds".
  EXPECT_TRUE(HasSource("ds"));
  // A new turn of s-1 is turn 3, not a second turn 1.
  v1::Turn turn;
  turn.set_session_id("s-1");
  auto appended = store_->AppendTurn(turn);
  ASSERT_TRUE(appended.ok());
  EXPECT_EQ(appended->seq(), 3);
}

TEST_F(RetentionTest, UnreferencedSourcesGoAfterTheGracePeriod) {
  // Submit stores the source just before its job: a young orphan stays.
  ASSERT_TRUE(store_->PutSource("young", "x").ok());
  ASSERT_TRUE(store_->PutSource("stale", "x").ok());
  ExecRaw(path_, absl::StrCat("UPDATE sources SET created_ms = ", kNow - 1000,
                              " WHERE digest = 'young'"));
  ExecRaw(path_, absl::StrCat("UPDATE sources SET created_ms = ",
                              kNow - 3600 * 1000, " WHERE digest = 'stale'"));
  auto stats = store_->Prune(AgeOnly(30), kNow);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_TRUE(HasSource("young"));
  EXPECT_FALSE(HasSource("stale"));
  EXPECT_EQ(stats->sources, 1);
}

TEST_F(RetentionTest, CompileCacheGoesByLastUse) {
  AddCompiled("unused", kNow - 31 * kDay);
  AddCompiled("used", kNow - 31 * kDay);
  ExecRaw(path_, absl::StrCat("UPDATE compile_cache SET last_used_ms = ",
                              kNow - kDay, " WHERE key = 'used'"));
  auto stats = store_->Prune(AgeOnly(30), kNow);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->compiled, 1);
  EXPECT_FALSE(HasCompiled("unused"));
  EXPECT_TRUE(HasCompiled("used"));
}

TEST_F(RetentionTest, SizeLimitDeletesOldestFirstAcrossTables) {
  // Jobs and cache entries of ~8 KiB, one of each per minute, interleaved.
  const int64_t t0 = kNow - kDay;
  for (int i = 0; i < 120; ++i) {
    AddJob(absl::StrCat("j", i), t0 + i * 60000, absl::StrCat("d", i),
           v1::STAGE_DONE, 8 << 10);
    AddCompiled(absl::StrCat("k", i), t0 + i * 60000 + 30000, 8 << 10);
  }
  AddJob("unfinished", t0 - kDay, "du", v1::STAGE_QUEUED, 8 << 10);
  auto before = store_->UsedBytes();
  ASSERT_TRUE(before.ok());
  Store::RetentionPolicy policy;
  policy.max_age = absl::ZeroDuration();
  policy.max_bytes = *before / 2;
  policy.batch_rows = 7;  // Several batches.
  auto stats = store_->Prune(policy, kNow);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_LE(stats->used_bytes_after, policy.max_bytes / 10 * 9);
  EXPECT_GT(stats->jobs, 30);
  EXPECT_GT(stats->compiled, 30);
  EXPECT_TRUE(HasJob("unfinished"));
  // Oldest first: what is left is a suffix in time of both tables.
  int first_job = -1, first_key = -1;
  for (int i = 0; i < 120; ++i) {
    if (first_job < 0 && HasJob(absl::StrCat("j", i))) first_job = i;
    if (first_key < 0 && HasCompiled(absl::StrCat("k", i))) first_key = i;
  }
  ASSERT_GT(first_job, 0);
  ASSERT_GT(first_key, 0);
  for (int i = first_job; i < 120; ++i) {
    EXPECT_TRUE(HasJob(absl::StrCat("j", i)));
  }
  // Interleaved in time: the two cut points lie within a batch.
  EXPECT_LE(std::abs(first_job - first_key), policy.batch_rows + 1);
  // A pruned job's source went with it.
  EXPECT_FALSE(HasSource("d0"));
  EXPECT_TRUE(HasSource(absl::StrCat("d", first_job)));
  // Under the limit now: a second run deletes nothing.
  stats = store_->Prune(policy, kNow);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->jobs + stats->compiled + stats->turns, 0);
}

TEST_F(RetentionTest, SizeLimitStopsWhenOnlyKeptRowsAreLeft) {
  for (int i = 0; i < 20; ++i) {
    AddJob(absl::StrCat("u", i), kNow - kDay, absl::StrCat("d", i),
           v1::STAGE_COMPILING, 8 << 10);
  }
  Store::RetentionPolicy policy;
  policy.max_bytes = 4096;  // Far below what the unfinished jobs hold.
  auto stats = store_->Prune(policy, kNow);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->jobs, 0);
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(HasJob(absl::StrCat("u", i)));
}

TEST_F(RetentionTest, ThreadPrunesAtStartAndThenPeriodically) {
  AddJob("old", absl::ToUnixMillis(absl::Now()) - 40 * kDay, "d");
  Retention::Options options;
  options.policy = AgeOnly(30);
  options.interval = absl::Milliseconds(50);
  Retention retention(options, store_.get());
  retention.Start();
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (retention.runs() < 3 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_GE(retention.runs(), 3);
  EXPECT_FALSE(HasJob("old"));
  const absl::Time stop = absl::Now();
  retention.Stop();
  EXPECT_LT(absl::Now() - stop, absl::Seconds(1));
}

TEST_F(RetentionTest, ThreadDoesNothingWhenNothingIsLimited) {
  Retention::Options options;
  options.policy.max_age = absl::ZeroDuration();
  options.policy.max_bytes = 0;
  options.interval = absl::Milliseconds(10);
  EXPECT_FALSE(Retention::Limits(options.policy));
  Retention retention(options, store_.get());
  retention.Start();
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(retention.runs(), 0);
}

TEST_F(RetentionTest, MetricsReportPrunedRowsAndSize) {
  AddJob("old", kNow - 40 * kDay, "d");
  ASSERT_TRUE(store_->Prune(AgeOnly(30), kNow).ok());
  Metrics metrics;
  ASSERT_TRUE(RegisterStoreMetrics(&metrics, store_.get()).ok());
  const std::string text = metrics.RenderPrometheus();
  EXPECT_THAT(text,
              HasSubstr("kbench_store_pruned_rows_total{table=\"jobs\"} 1"));
  EXPECT_THAT(text,
              HasSubstr("kbench_store_pruned_rows_total{table=\"sweeps\"} 0"));
  EXPECT_THAT(text, HasSubstr("kbench_store_unreadable_rows_total 0"));
  EXPECT_THAT(text, HasSubstr("kbench_store_used_bytes "));
}

TEST(StoreMigrationTest, VersionOneDatabaseIsMigratedKeepingItsRows) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/kbd.db";
  {
    Store::Options options;
    options.path = path;
    auto store = Store::Open(options);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->PutSource("d", "text").ok());
  }
  // Back to what version 1 had.
  ExecRaw(path,
          "DROP INDEX jobs_by_source; DROP INDEX turns_by_created; "
          "DROP INDEX turns_by_source; DROP INDEX sources_by_created; "
          "DROP TABLE health; ALTER TABLE turns DROP COLUMN speedup; "
          "ALTER TABLE sessions DROP COLUMN best_speedup; "
          "ALTER TABLE sessions DROP COLUMN last_tool; "
          "ALTER TABLE sessions DROP COLUMN last_verdict; "
          "DROP TABLE sweeps; PRAGMA user_version = 1");
  Store::Options options;
  options.path = path;
  auto store = Store::Open(options);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(QueryInt(path, "PRAGMA user_version"), 4);
  EXPECT_EQ(*(*store)->GetSource("d"), "text");
  EXPECT_EQ(QueryInt(path,
                     "SELECT COUNT(*) FROM sqlite_master WHERE name = "
                     "'turns_by_created'"),
            1);
  EXPECT_EQ(QueryInt(path,
                     "SELECT COUNT(*) FROM sqlite_master WHERE name = "
                     "'sweeps_by_created'"),
            1);
  EXPECT_TRUE((*store)->CheckWritable().ok());
}

}  // namespace
}  // namespace kbench
