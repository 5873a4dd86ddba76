// Tests of JobTable (server/core/job_table.h) on a Store in a temp file:
// insert/get, updates and their persistence (stage changes at once, detail
// changes throttled), Finish with its session turn in one write, watchers
// (called outside the lock, in order under concurrent changes), eviction,
// Unfinished and Adopt.
#include "server/core/job_table.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::Job NewJob(const std::string& id, int64_t created_ms = 1000) {
  v1::Job job;
  job.set_id(id);
  job.set_kind(v1::JOB_KIND_CORRECTNESS);
  job.set_stage(v1::STAGE_QUEUED);
  job.set_problem("gather_linear_fp32");
  job.set_created_unix_ms(created_ms);
  job.set_updated_unix_ms(created_ms);
  return job;
}

auto SetStage(v1::Stage stage, const std::string& detail = "") {
  return [stage, detail](v1::Job* j) {
    j->set_stage(stage);
    j->set_stage_detail(detail);
  };
}

auto SetDetail(const std::string& detail) {
  return [detail](v1::Job* j) { j->set_stage_detail(detail); };
}

class JobTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenStore();
    ASSERT_NE(store_, nullptr);
  }

  std::unique_ptr<Store> OpenStore() {
    Store::Options options;
    options.path = dir_.path() + "/kbd.db";
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }

  // The job as stored, read through a second connection.
  v1::Job Stored(const std::string& id) {
    std::unique_ptr<Store> other = OpenStore();
    if (other == nullptr) return {};
    absl::StatusOr<v1::Job> job = other->GetJob(id);
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? *job : v1::Job();
  }

  JobTable::Options Opts(absl::Duration detail_interval = absl::Seconds(1)) {
    JobTable::Options o;
    o.detail_write_interval = detail_interval;
    return o;
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(JobTableTest, InsertThenGet) {
  JobTable table(Opts(), store_.get());
  ASSERT_TRUE(table.Insert(NewJob("j1"), v1::KernelRequest()).ok());
  absl::StatusOr<v1::Job> job = table.Get("j1");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->id(), "j1");
  EXPECT_EQ(job->stage(), v1::STAGE_QUEUED);
  EXPECT_EQ(job->problem(), "gather_linear_fp32");
  // Persisted with it.
  EXPECT_EQ(Stored("j1").problem(), "gather_linear_fp32");
  EXPECT_EQ(Stored("j1").stage(), v1::STAGE_QUEUED);
}

TEST_F(JobTableTest, GetUnknownIsNotFound) {
  JobTable table(Opts(), store_.get());
  absl::StatusOr<v1::Job> job = table.Get("nope");
  EXPECT_EQ(job.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(job.status().message(), HasSubstr("nope"));
}

TEST_F(JobTableTest, DuplicateInsertIsAlreadyExists) {
  JobTable table(Opts(), store_.get());
  ASSERT_TRUE(table.Insert(NewJob("j1"), v1::KernelRequest()).ok());
  absl::Status s = table.Insert(NewJob("j1"), v1::KernelRequest());
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(s.message(), HasSubstr("j1"));
}

TEST_F(JobTableTest, UpdateChangesStageAndStampsUpdatedTime) {
  JobTable table(Opts(), store_.get());
  ASSERT_TRUE(table.Insert(NewJob("j1"), v1::KernelRequest()).ok());
  const int64_t before = absl::ToUnixMillis(absl::Now());
  absl::StatusOr<v1::Job> job =
      table.Update("j1", SetStage(v1::STAGE_COMPILING, "nvrtc"));
  const int64_t after = absl::ToUnixMillis(absl::Now());
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->stage(), v1::STAGE_COMPILING);
  EXPECT_EQ(job->stage_detail(), "nvrtc");
  EXPECT_GE(job->updated_unix_ms(), before);
  EXPECT_LE(job->updated_unix_ms(), after);
  EXPECT_EQ(job->finished_unix_ms(), 0);
  EXPECT_EQ(job->created_unix_ms(), 1000);
  absl::StatusOr<v1::Job> got = table.Get("j1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->stage(), v1::STAGE_COMPILING);
  EXPECT_EQ(got->updated_unix_ms(), job->updated_unix_ms());
}

TEST_F(JobTableTest, UpdateOfUnknownJobIsNotFound) {
  JobTable table(Opts(), store_.get());
  bool called = false;
  absl::StatusOr<v1::Job> job =
      table.Update("nope", [&](v1::Job*) { called = true; });
  EXPECT_EQ(job.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(job.status().message(), HasSubstr("nope"));
  EXPECT_FALSE(called);
}

TEST_F(JobTableTest, DoneSetsFinishedTimeAndIsFinal) {
  JobTable table(Opts(), store_.get());
  ASSERT_TRUE(table.Insert(NewJob("j1"), v1::KernelRequest()).ok());
  absl::StatusOr<v1::Job> done = table.Update("j1", [](v1::Job* j) {
    j->set_stage(v1::STAGE_DONE);
    j->mutable_result()->set_verdict(v1::VERDICT_PASSED);
  });
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_GT(done->finished_unix_ms(), 0);
  EXPECT_EQ(done->finished_unix_ms(), done->updated_unix_ms());

  bool called = false;
  absl::StatusOr<v1::Job> again = table.Update("j1", [&](v1::Job* j) {
    called = true;
    j->set_stage(v1::STAGE_RUNNING);
  });
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(again.status().message(), HasSubstr("j1"));
  EXPECT_FALSE(called);
  absl::StatusOr<v1::Job> got = table.Get("j1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->stage(), v1::STAGE_DONE);
  EXPECT_EQ(got->result().verdict(), v1::VERDICT_PASSED);
  EXPECT_EQ(got->finished_unix_ms(), done->finished_unix_ms());
}

TEST_F(JobTableTest, WatchersSeeEveryChangeInOrderThenNothing) {
  JobTable table(Opts(), store_.get());
  ASSERT_TRUE(table.Insert(NewJob("j1"), v1::KernelRequest()).ok());
  std::vector<std::string> seen;
  auto record = [&seen](const v1::Job& j) {
    seen.push_back(
        absl::StrCat(v1::Stage_Name(j.stage()), "/", j.stage_detail()));
  };
  absl::StatusOr<int64_t> token = table.Watch("j1", record);
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_NE(*token, 0);
  ASSERT_TRUE(table.Update("j1", SetStage(v1::STAGE_COMPILING, "nvrtc")).ok());
  ASSERT_TRUE(
      table.Update("j1", SetStage(v1::STAGE_WAITING_GPU, "pos 1")).ok());
  ASSERT_TRUE(table.Update("j1", SetStage(v1::STAGE_RUNNING, "leased")).ok());
  ASSERT_TRUE(table.Update("j1", SetDetail("trial 1/5")).ok());
  ASSERT_TRUE(table.Update("j1", SetDetail("trial 2/5")).ok());
  ASSERT_TRUE(table.Update("j1", SetStage(v1::STAGE_DONE, "passed")).ok());
  EXPECT_FALSE(table.Update("j1", SetDetail("late")).ok());
  table.Evict(absl::Now() + absl::Hours(1));
  EXPECT_THAT(seen,
              ElementsAre("STAGE_QUEUED/", "STAGE_COMPILING/nvrtc",
                          "STAGE_WAITING_GPU/pos 1", "STAGE_RUNNING/leased",
                          "STAGE_RUNNING/trial 1/5", "STAGE_RUNNING/trial 2/5",
                          "STAGE_DONE/passed"));
  table.Unwatch("j1", *token);  // Harmless after the end.
}

TEST_F(JobTableTest, WatchOfDoneJobCallsOnceAndReturnsZero) {
  JobTable table(Opts(), store_.get());
  ASSERT_TRUE(table.Insert(NewJob("j1"), v1::KernelRequest()).ok());
  ASSERT_TRUE(table.Update("j1", SetStage(v1::STAGE_DONE, "passed")).ok());
  int calls = 0;
  v1::Stage last = v1::STAGE_UNSPECIFIED;
  absl::StatusOr<int64_t> token = table.Watch("j1", [&](const v1::Job& j) {
    ++calls;
    last = j.stage();
  });
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(*token, 0);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(last, v1::STAGE_DONE);

  // Also once it is only in the store.
  table.Evict(absl::Now() + absl::Hours(1));
  calls = 0;
  last = v1::STAGE_UNSPECIFIED;
  token = table.Watch("j1", [&](const v1::Job& j) {
    ++calls;
    last = j.stage();
  });
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(*token, 0);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(last, v1::STAGE_DONE);
}

TEST_F(JobTableTest, WatchOfUnknownJobIsNotFound) {
  JobTable table(Opts(), store_.get());
  bool called = false;
  absl::StatusOr<int64_t> token =
      table.Watch("nope", [&](const v1::Job&) { called = true; });
  EXPECT_EQ(token.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(token.status().message(), HasSubstr("nope"));
  EXPECT_FALSE(called);
}

TEST_F(JobTableTest, UnwatchStopsCalls) {
  JobTable table(Opts(), store_.get());
  ASSERT_TRUE(table.Insert(NewJob("j1"), v1::KernelRequest()).ok());
  int a_calls = 0, b_calls = 0;
  absl::StatusOr<int64_t> a =
      table.Watch("j1", [&](const v1::Job&) { ++a_calls; });
  absl::StatusOr<int64_t> b =
      table.Watch("j1", [&](const v1::Job&) { ++b_calls; });
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
  ASSERT_TRUE(table.Update("j1", SetStage(v1::STAGE_COMPILING)).ok());
  EXPECT_EQ(a_calls, 2);
  EXPECT_EQ(b_calls, 2);
  table.Unwatch("j1", *a);
  ASSERT_TRUE(table.Update("j1", SetStage(v1::STAGE_WAITING_GPU)).ok());
  ASSERT_TRUE(table.Update("j1", SetStage(v1::STAGE_DONE)).ok());
  EXPECT_EQ(a_calls, 2);
  EXPECT_EQ(b_calls, 4);
}

TEST_F(JobTableTest, StageChangesAreStoredAtOnce) {
  JobTable table(Opts(absl::Hours(1)), store_.get());
  ASSERT_TRUE(table.Insert(NewJob("j1"), v1::KernelRequest()).ok());
  ASSERT_TRUE(table.Update("j1", SetStage(v1::STAGE_COMPILING, "nvrtc")).ok());
  v1::Job stored = Stored("j1");
  EXPECT_EQ(stored.stage(), v1::STAGE_COMPILING);
  EXPECT_EQ(stored.stage_detail(), "nvrtc");
  ASSERT_TRUE(table
                  .Update("j1",
                          [](v1::Job* j) {
                            j->set_stage(v1::STAGE_DONE);
                            j->mutable_result()->set_verdict(
                                v1::VERDICT_FAILED);
                          })
                  .ok());
  stored = Stored("j1");
  EXPECT_EQ(stored.stage(), v1::STAGE_DONE);
  EXPECT_EQ(stored.result().verdict(), v1::VERDICT_FAILED);
  EXPECT_GT(stored.finished_unix_ms(), 0);
}

TEST_F(JobTableTest, DetailOnlyChangesAreThrottled) {
  JobTable table(Opts(absl::Hours(1)), store_.get());
  ASSERT_TRUE(table.Insert(NewJob("j1"), v1::KernelRequest()).ok());
  ASSERT_TRUE(table.Update("j1", SetDetail("trial 1/5")).ok());
  // In memory at once...
  absl::StatusOr<v1::Job> live = table.Get("j1");
  ASSERT_TRUE(live.ok());
  EXPECT_EQ(live->stage_detail(), "trial 1/5");
  // ...but not yet in the store.
  v1::Job stored = Stored("j1");
  EXPECT_EQ(stored.stage(), v1::STAGE_QUEUED);
  EXPECT_EQ(stored.stage_detail(), "");
  // The next stage change writes everything.
  ASSERT_TRUE(table.Update("j1", SetStage(v1::STAGE_RUNNING, "leased")).ok());
  stored = Stored("j1");
  EXPECT_EQ(stored.stage(), v1::STAGE_RUNNING);
  EXPECT_EQ(stored.stage_detail(), "leased");
  ASSERT_TRUE(table.Update("j1", SetDetail("trial 2/5")).ok());
  EXPECT_EQ(Stored("j1").stage_detail(), "leased");
}

TEST_F(JobTableTest, DetailOnlyChangesAreStoredAfterTheInterval) {
  JobTable table(Opts(absl::ZeroDuration()), store_.get());
  ASSERT_TRUE(table.Insert(NewJob("j1"), v1::KernelRequest()).ok());
  ASSERT_TRUE(table.Update("j1", SetDetail("trial 1/5")).ok());
  EXPECT_EQ(Stored("j1").stage_detail(), "trial 1/5");
}

TEST_F(JobTableTest, EvictDropsOnlyOldFinishedJobsFromMemory) {
  JobTable table(Opts(), store_.get());
  ASSERT_TRUE(table.Insert(NewJob("done"), v1::KernelRequest()).ok());
  ASSERT_TRUE(table.Insert(NewJob("open", 2000), v1::KernelRequest()).ok());
  ASSERT_TRUE(table
                  .Update("done",
                          [](v1::Job* j) {
                            j->set_stage(v1::STAGE_DONE);
                            j->mutable_result()->set_verdict(
                                v1::VERDICT_PASSED);
                          })
                  .ok());
  // Within the retention the finished job stays live (FailedPrecondition,
  // not NotFound).
  table.Evict(absl::Now());
  EXPECT_EQ(table.Update("done", SetDetail("x")).status().code(),
            absl::StatusCode::kFailedPrecondition);

  table.Evict(absl::Now() + absl::Hours(1));
  EXPECT_EQ(table.Update("done", SetDetail("x")).status().code(),
            absl::StatusCode::kNotFound);
  // Still readable, from the store.
  absl::StatusOr<v1::Job> got = table.Get("done");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->stage(), v1::STAGE_DONE);
  EXPECT_EQ(got->result().verdict(), v1::VERDICT_PASSED);
  // Its id stays taken.
  EXPECT_EQ(table.Insert(NewJob("done"), v1::KernelRequest()).code(),
            absl::StatusCode::kAlreadyExists);
  // The unfinished job is kept.
  EXPECT_TRUE(table.Update("open", SetStage(v1::STAGE_COMPILING)).ok());
}

TEST_F(JobTableTest, UnfinishedListsUnfinishedJobsInCreationOrder) {
  JobTable table(Opts(), store_.get());
  ASSERT_TRUE(table.Insert(NewJob("a", 3000), v1::KernelRequest()).ok());
  ASSERT_TRUE(table.Insert(NewJob("b", 1000), v1::KernelRequest()).ok());
  ASSERT_TRUE(table.Insert(NewJob("c", 4000), v1::KernelRequest()).ok());
  ASSERT_TRUE(table.Insert(NewJob("d", 2000), v1::KernelRequest()).ok());
  ASSERT_TRUE(table.Update("c", SetStage(v1::STAGE_DONE)).ok());
  ASSERT_TRUE(table.Update("a", SetStage(v1::STAGE_RUNNING)).ok());
  std::vector<std::string> ids;
  for (const v1::Job& j : table.Unfinished()) ids.push_back(j.id());
  EXPECT_THAT(ids, ElementsAre("b", "d", "a"));
  EXPECT_EQ(table.Unfinished().back().stage(), v1::STAGE_RUNNING);
}

TEST_F(JobTableTest, AdoptMakesAStoredJobLiveAgain) {
  // A job left unfinished by an earlier kbd.
  v1::Job old = NewJob("old", 500);
  old.set_stage(v1::STAGE_WAITING_GPU);
  ASSERT_TRUE(store_->InsertJob(old, v1::KernelRequest()).ok());

  JobTable table(Opts(), store_.get());
  // Readable through the store even before adoption, but not live.
  EXPECT_EQ(table.Update("old", SetDetail("x")).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(table.Unfinished().empty());

  table.Adopt(old);
  ASSERT_EQ(table.Unfinished().size(), 1u);
  EXPECT_EQ(table.Unfinished()[0].id(), "old");
  int calls = 0;
  absl::StatusOr<int64_t> token =
      table.Watch("old", [&](const v1::Job&) { ++calls; });
  ASSERT_TRUE(token.ok());
  EXPECT_NE(*token, 0);
  absl::StatusOr<v1::Job> done = table.Update("old", [](v1::Job* j) {
    j->set_stage(v1::STAGE_DONE);
    j->mutable_result()->set_verdict(v1::VERDICT_ERROR);
  });
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(Stored("old").stage(), v1::STAGE_DONE);
  EXPECT_EQ(Stored("old").result().verdict(), v1::VERDICT_ERROR);
  EXPECT_TRUE(table.Unfinished().empty());
}

TEST_F(JobTableTest, FinishWritesTheJobAndItsTurnTogether) {
  JobTable table({}, store_.get());
  v1::Job job = NewJob("j1");
  job.set_session_id("s");
  ASSERT_TRUE(table.Insert(job, v1::KernelRequest()).ok());
  absl::StatusOr<v1::Job> done = table.Finish(
      "j1",
      [](v1::Job* j) { j->mutable_result()->set_verdict(v1::VERDICT_PASSED); },
      [](const v1::Job& j) {
        Store::SessionTurn turn;
        turn.turn.set_session_id(j.session_id());
        turn.turn.set_tool("run_correctness");
        turn.turn.set_job_id(j.id());
        turn.turn.set_verdict(j.result().verdict());
        return std::optional<Store::SessionTurn>(turn);
      });
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->stage(), v1::STAGE_DONE);
  EXPECT_GT(done->finished_unix_ms(), 0);
  EXPECT_EQ(Stored("j1").stage(), v1::STAGE_DONE);
  absl::StatusOr<std::vector<v1::Turn>> turns = store_->ListTurns("s");
  ASSERT_TRUE(turns.ok());
  ASSERT_EQ(turns->size(), 1u);
  EXPECT_EQ((*turns)[0].job_id(), "j1");
  // Finished once.
  EXPECT_EQ(table
                .Finish(
                    "j1", [](v1::Job*) {},
                    [](const v1::Job&) { return std::nullopt; })
                .status()
                .code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->ListTurns("s")->size(), 1u);
}

TEST_F(JobTableTest, WatchersMayCallBackIntoTheTable) {
  JobTable table({}, store_.get());
  ASSERT_TRUE(table.Insert(NewJob("j1"), v1::KernelRequest()).ok());
  std::vector<std::string> seen;
  absl::StatusOr<int64_t> token = table.Watch("j1", [&](const v1::Job& j) {
    // Under the old contract (called with the lock held) this deadlocked.
    absl::StatusOr<v1::Job> again = table.Get(j.id());
    ASSERT_TRUE(again.ok());
    seen.push_back(again->stage_detail());
  });
  ASSERT_TRUE(token.ok());
  ASSERT_TRUE(table.Update("j1", SetDetail("a")).ok());
  ASSERT_TRUE(table.Update("j1", SetStage(v1::STAGE_DONE, "b")).ok());
  EXPECT_THAT(seen, ElementsAre("", "a", "b"));
}

TEST_F(JobTableTest, ConcurrentChangesReachEachWatcherInOrder) {
  JobTable table({}, store_.get());
  ASSERT_TRUE(table.Insert(NewJob("j1"), v1::KernelRequest()).ok());
  // Each change numbers itself under the table's lock (mutate runs there);
  // every watcher must see the numbers rise, from whichever thread.
  std::atomic<int> next{0};
  struct Seen {
    absl::Mutex mu;
    std::vector<int> values;
  };
  std::vector<std::shared_ptr<Seen>> watchers;
  for (int w = 0; w < 3; ++w) {
    auto seen = std::make_shared<Seen>();
    watchers.push_back(seen);
    ASSERT_TRUE(table
                    .Watch("j1",
                           [seen](const v1::Job& j) {
                             int v = -1;
                             if (!j.stage_detail().empty()) {
                               ASSERT_TRUE(
                                   absl::SimpleAtoi(j.stage_detail(), &v));
                             }
                             absl::MutexLock lock(&seen->mu);
                             seen->values.push_back(v);
                           })
                    .ok());
  }
  constexpr int kPerThread = 300;
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        ASSERT_TRUE(table
                        .Update("j1",
                                [&](v1::Job* j) {
                                  j->set_stage_detail(
                                      absl::StrCat(next.fetch_add(1)));
                                })
                        .ok());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& seen : watchers) {
    absl::MutexLock lock(&seen->mu);
    ASSERT_EQ(seen->values.size(), 1u + 4 * kPerThread);
    for (size_t i = 1; i < seen->values.size(); ++i) {
      ASSERT_EQ(seen->values[i], seen->values[i - 1] + 1) << "at " << i;
    }
  }
}

}  // namespace
}  // namespace kbench
