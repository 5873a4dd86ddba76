// Tests for the sessions and turns of Store (server/store/store.h): creation,
// seq assignment, counts, status, ordering, and concurrent appends from one
// and from two connections.
#include <sqlite3.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/store.h"
#include "server/store/store_fixtures.h"

namespace kbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class StoreSessionsTest : public testing::StoreFixture {};

TEST_F(StoreSessionsTest, SessionsTouchAppendAndStatus) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->TouchSession("s1", "", 1000).ok());
  auto created = store->GetSession("s1");
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->problem(), "");
  EXPECT_EQ(created->status(), "open");
  EXPECT_EQ(created->created_unix_ms(), 1000);
  EXPECT_EQ(created->updated_unix_ms(), 1000);
  EXPECT_EQ(created->turns(), 0);

  ASSERT_TRUE(store->TouchSession("s1", "gather_linear_fp32", 2000).ok());
  ASSERT_TRUE(store->TouchSession("s1", "other_problem", 3000).ok());
  auto touched = store->GetSession("s1");
  ASSERT_TRUE(touched.ok());
  EXPECT_EQ(touched->problem(), "gather_linear_fp32");  // Filled once.
  EXPECT_EQ(touched->created_unix_ms(), 1000);
  EXPECT_EQ(touched->updated_unix_ms(), 3000);

  for (int i = 1; i <= 3; ++i) {
    v1::Turn turn;
    turn.set_session_id("s1");
    turn.set_seq(99);  // Ignored: the store assigns seq.
    turn.set_tool(i == 3 ? "submit_kernel" : "run_correctness");
    turn.set_job_id(absl::StrFormat("job-%d", i));
    turn.set_duration_ms(1.25 * i);
    turn.set_source_digest("dg");
    turn.set_verdict(v1::VERDICT_PASSED);
    turn.set_created_unix_ms(4000 + i);
    turn.set_message("ok");
    auto stored = store->AppendTurn(turn);
    ASSERT_TRUE(stored.ok()) << stored.status();
    EXPECT_EQ(stored->seq(), i);
  }
  auto turns = store->ListTurns("s1");
  ASSERT_TRUE(turns.ok()) << turns.status();
  ASSERT_EQ(turns->size(), 3u);
  const v1::Turn& last = (*turns)[2];
  EXPECT_EQ(last.session_id(), "s1");
  EXPECT_EQ(last.seq(), 3);
  EXPECT_EQ(last.tool(), "submit_kernel");
  EXPECT_EQ(last.job_id(), "job-3");
  EXPECT_DOUBLE_EQ(last.duration_ms(), 3.75);
  EXPECT_EQ(last.source_digest(), "dg");
  EXPECT_EQ(last.verdict(), v1::VERDICT_PASSED);
  EXPECT_EQ(last.created_unix_ms(), 4003);
  EXPECT_EQ(last.message(), "ok");
  EXPECT_EQ((*turns)[0].seq(), 1);
  EXPECT_EQ((*turns)[1].seq(), 2);

  auto session = store->GetSession("s1");
  ASSERT_TRUE(session.ok());
  EXPECT_EQ(session->turns(), 3);
  EXPECT_EQ(session->updated_unix_ms(), 4003);

  ASSERT_TRUE(store->SetSessionStatus("s1", "submitted").ok());
  EXPECT_EQ(store->GetSession("s1")->status(), "submitted");
  absl::Status bad = store->SetSessionStatus("s1", "done");
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(), HasSubstr("'done'"));
  EXPECT_EQ(store->GetSession("s1")->status(), "submitted");

  // A turn for an unknown session creates it.
  v1::Turn orphan;
  orphan.set_session_id("s2");
  orphan.set_tool("get_gpu_specs");
  auto first = store->AppendTurn(orphan);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->seq(), 1);
  EXPECT_GT(first->created_unix_ms(), 0);
  EXPECT_EQ(store->GetSession("s2")->turns(), 1);
  EXPECT_EQ(store->GetSession("s2")->status(), "open");
  EXPECT_EQ(store->AppendTurn(v1::Turn()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(StoreSessionsTest, ListSessionsNewestFirstWithLimit) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->TouchSession("old", "p", 100).ok());
  ASSERT_TRUE(store->TouchSession("mid", "p", 200).ok());
  ASSERT_TRUE(store->TouchSession("new", "p", 300).ok());
  ASSERT_TRUE(store->TouchSession("old", "p", 400).ok());  // Now newest.
  auto all = store->ListSessions(10);
  ASSERT_TRUE(all.ok()) << all.status();
  std::vector<std::string> ids;
  for (const auto& s : *all) ids.push_back(s.id());
  EXPECT_THAT(ids, ElementsAre("old", "new", "mid"));
  auto two = store->ListSessions(2);
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[1].id(), "new");
  EXPECT_EQ(store->ListSessions(0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Checks that the turns of `session` are numbered 1..n without gaps.
void ExpectSeqsOneToN(Store& store, const std::string& session, int n) {
  auto turns = store.ListTurns(session);
  ASSERT_TRUE(turns.ok()) << turns.status();
  ASSERT_EQ(static_cast<int>(turns->size()), n);
  std::set<std::string> jobs;
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ((*turns)[i].seq(), i + 1);
    jobs.insert((*turns)[i].job_id());
  }
  EXPECT_EQ(static_cast<int>(jobs.size()), n);  // Every append landed once.
  EXPECT_EQ(store.GetSession(session)->turns(), n);
}

void AppendFromThreads(std::vector<Store*> stores, int threads, int per_thread,
                       std::vector<int32_t>* seqs) {
  std::vector<std::vector<int32_t>> got(threads);
  std::vector<std::thread> workers;
  workers.reserve(threads);
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      Store* store = stores[t % stores.size()];
      for (int i = 0; i < per_thread; ++i) {
        v1::Turn turn;
        turn.set_session_id("busy");
        turn.set_job_id(absl::StrFormat("t%d-%d", t, i));
        auto stored = store->AppendTurn(turn);
        EXPECT_TRUE(stored.ok()) << stored.status();
        if (stored.ok()) got[t].push_back(stored->seq());
      }
    });
  }
  for (auto& worker : workers) worker.join();
  for (const auto& part : got) {
    seqs->insert(seqs->end(), part.begin(), part.end());
  }
  std::sort(seqs->begin(), seqs->end());
}

TEST_F(StoreSessionsTest, ConcurrentAppendTurnAssignsDistinctSeqs) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  std::vector<int32_t> seqs;
  AppendFromThreads({store.get()}, 8, 25, &seqs);
  std::vector<int32_t> expected(200);
  for (int i = 0; i < 200; ++i) expected[i] = i + 1;
  EXPECT_EQ(seqs, expected);
  ExpectSeqsOneToN(*store, "busy", 200);
  EXPECT_EQ(RawQuery("SELECT COUNT(DISTINCT seq) || '/' || MIN(seq) || '/' || "
                     "MAX(seq) FROM turns WHERE session_id = 'busy'"),
            "200/1/200");
}

// Two connections to one file: BEGIN IMMEDIATE and the busy timeout keep
// seq assignment atomic across them.
TEST_F(StoreSessionsTest, ConcurrentAppendTurnAcrossTwoConnections) {
  auto a = OpenStore(60000);
  auto b = OpenStore(60000);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::vector<int32_t> seqs;
  AppendFromThreads({a.get(), b.get()}, 8, 25, &seqs);
  std::vector<int32_t> expected(200);
  for (int i = 0; i < 200; ++i) expected[i] = i + 1;
  EXPECT_EQ(seqs, expected);
  ExpectSeqsOneToN(*b, "busy", 200);
}

}  // namespace
}  // namespace kbench
