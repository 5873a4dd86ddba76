// Tests for the session summary the Store keeps with each turn (best
// speedup, last tool and verdict), for FinishJob's one transaction, and for
// the version-3 migration that fills the summary of older databases.
#include <sqlite3.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/store.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

void ExecRaw(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

v1::Turn TimedTurn(const std::string& session, const std::string& tool,
                   v1::Verdict verdict, double speedup) {
  v1::Turn t;
  t.set_session_id(session);
  t.set_tool(tool);
  t.set_verdict(verdict);
  t.set_speedup(speedup);
  return t;
}

v1::Job DoneJob(const std::string& id, const std::string& session,
                double speedup) {
  v1::Job job;
  job.set_id(id);
  job.set_kind(v1::JOB_KIND_SUBMIT);
  job.set_stage(v1::STAGE_DONE);
  job.set_session_id(session);
  job.set_created_unix_ms(1000);
  job.set_updated_unix_ms(2000);
  job.mutable_result()->set_verdict(v1::VERDICT_PASSED);
  job.mutable_result()->mutable_timing()->set_speedup(speedup);
  return job;
}

class StoreSummaryTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = Open(); }

  std::unique_ptr<Store> Open() {
    Store::Options options;
    options.path = path_;
    auto store = Store::Open(options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  // Inserts `job` as it was when it started (not DONE).
  void InsertRunning(v1::Job job) {
    job.set_stage(v1::STAGE_RUNNING);
    job.clear_result();
    ASSERT_TRUE(store_->InsertJob(job, v1::KernelRequest()).ok());
  }

  testing::TempDir dir_;
  std::string path_ = dir_.path() + "/kbd.db";
  std::unique_ptr<Store> store_;
};

TEST_F(StoreSummaryTest, EachTurnUpdatesTheSummaryInItsRow) {
  ASSERT_TRUE(
      store_
          ->AppendTurn(TimedTurn("s", "submit_kernel", v1::VERDICT_PASSED, 2.5))
          .ok());
  ASSERT_TRUE(
      store_
          ->AppendTurn(TimedTurn("s", "submit_kernel", v1::VERDICT_PASSED, 1.5))
          .ok());
  ASSERT_TRUE(
      store_->AppendTurn(TimedTurn("s", "get_gpu_specs", v1::VERDICT_ERROR, 0))
          .ok());
  absl::StatusOr<v1::Session> s = store_->GetSession("s");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->turns(), 3);
  EXPECT_DOUBLE_EQ(s->best_speedup(), 2.5);  // The best, not the last.
  EXPECT_EQ(s->last_tool(), "get_gpu_specs");
  EXPECT_EQ(s->last_verdict(), v1::VERDICT_ERROR);
  absl::StatusOr<std::vector<v1::Session>> list = store_->ListSessions(10);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_DOUBLE_EQ((*list)[0].best_speedup(), 2.5);
  absl::StatusOr<std::vector<v1::Turn>> turns = store_->ListTurns("s");
  ASSERT_TRUE(turns.ok());
  EXPECT_DOUBLE_EQ((*turns)[0].speedup(), 2.5);
}

TEST_F(StoreSummaryTest, AnImpossibleSpeedupIsRefused) {
  for (double bad : {-1.0, 1e9, std::nan("")}) {
    absl::StatusOr<v1::Turn> t = store_->AppendTurn(
        TimedTurn("s", "submit_kernel", v1::VERDICT_PASSED, bad));
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(t.status().message(), HasSubstr("speedup"));
  }
  EXPECT_EQ(store_->GetSession("s").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(StoreSummaryTest, FinishJobWritesTheJobTurnAndStatusTogether) {
  const v1::Job job = DoneJob("j-1", "s", 3.0);
  InsertRunning(job);
  Store::SessionTurn turn{
      TimedTurn("s", "submit_kernel", v1::VERDICT_PASSED, 3), "submitted"};
  turn.turn.set_job_id("j-1");
  ASSERT_TRUE(store_->FinishJob(job, &turn).ok());
  EXPECT_EQ(store_->GetJob("j-1")->stage(), v1::STAGE_DONE);
  absl::StatusOr<v1::Session> s = store_->GetSession("s");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->status(), "submitted");
  EXPECT_EQ(s->turns(), 1);
  EXPECT_DOUBLE_EQ(s->best_speedup(), 3.0);
}

TEST_F(StoreSummaryTest, FinishJobWritesNothingWhenTheTurnIsRefused) {
  const v1::Job job = DoneJob("j-1", "s", 3.0);
  InsertRunning(job);
  // A bad status fails the transaction after the job and turn were written:
  // both must be rolled back.
  Store::SessionTurn turn{
      TimedTurn("s", "submit_kernel", v1::VERDICT_PASSED, 3), "no-such-status"};
  const absl::Status s = store_->FinishJob(job, &turn);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->GetJob("j-1")->stage(), v1::STAGE_RUNNING);
  EXPECT_EQ(store_->GetSession("s").status().code(),
            absl::StatusCode::kNotFound);
  // Without a session the job alone is written.
  EXPECT_TRUE(store_->FinishJob(job, nullptr).ok());
  EXPECT_EQ(store_->GetJob("j-1")->stage(), v1::STAGE_DONE);
}

TEST_F(StoreSummaryTest, VersionTwoDatabaseGetsItsSummariesFilled) {
  // A session with two passed submits, an unparsable job's turn and a last
  // turn of another tool, written as version 2 had it.
  const v1::Job fast = DoneJob("j-fast", "s", 4.0);
  const v1::Job slow = DoneJob("j-slow", "s", 1.2);
  InsertRunning(fast);
  InsertRunning(slow);
  ASSERT_TRUE(store_->UpdateJob(fast).ok());
  ASSERT_TRUE(store_->UpdateJob(slow).ok());
  for (const char* id : {"j-fast", "j-slow", "j-gone"}) {
    v1::Turn t = TimedTurn("s", "submit_kernel", v1::VERDICT_PASSED, 0);
    t.set_job_id(id);
    ASSERT_TRUE(store_->AppendTurn(t).ok());
  }
  ASSERT_TRUE(
      store_->AppendTurn(TimedTurn("s", "compare_runs", v1::VERDICT_PASSED, 0))
          .ok());
  ASSERT_TRUE(store_->TouchSession("empty", "", 5).ok());
  store_.reset();
  ExecRaw(path_,
          "ALTER TABLE turns DROP COLUMN speedup; "
          "ALTER TABLE sessions DROP COLUMN best_speedup; "
          "ALTER TABLE sessions DROP COLUMN last_tool; "
          "ALTER TABLE sessions DROP COLUMN last_verdict; "
          "DROP TABLE sweeps; PRAGMA user_version = 2");

  store_ = Open();
  ASSERT_NE(store_, nullptr);
  absl::StatusOr<v1::Session> s = store_->GetSession("s");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_DOUBLE_EQ(s->best_speedup(), 4.0);
  EXPECT_EQ(s->last_tool(), "compare_runs");
  EXPECT_EQ(s->last_verdict(), v1::VERDICT_PASSED);
  absl::StatusOr<std::vector<v1::Turn>> turns = store_->ListTurns("s");
  ASSERT_TRUE(turns.ok());
  ASSERT_EQ(turns->size(), 4u);
  EXPECT_DOUBLE_EQ((*turns)[1].speedup(), 1.2);
  EXPECT_DOUBLE_EQ((*turns)[2].speedup(), 0);  // Its job is not stored.
  absl::StatusOr<v1::Session> empty = store_->GetSession("empty");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->last_tool(), "");
  EXPECT_DOUBLE_EQ(empty->best_speedup(), 0);
}

}  // namespace
}  // namespace kbench
