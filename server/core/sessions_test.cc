// Sessions and AgentService's views for the dashboard: session summaries
// (best speedup over passed timed jobs, last tool and verdict, kept in the
// session's row), session details (problem, turns with their jobs),
// CompareRuns without recording a turn, refusals recorded as turns.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "server/core/agent_service.h"
#include "server/core/core_fixtures.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

class SessionSummaryTest : public testing::CoreFixture {
 protected:
  // A finished job of `kind` in `session`.
  void AddRun(const std::string& session, const std::string& id,
              v1::JobKind kind, v1::Verdict verdict, double speedup,
              int64_t when_ms) {
    Run run;
    run.kind = kind;
    run.verdict = verdict;
    run.speedup = speedup;
    run.when_ms = when_ms;
    CoreFixture::AddRun(session, id, run);
  }

  const v1::Session* Find(const std::vector<v1::Session>& list,
                          const std::string& id) {
    for (const v1::Session& s : list) {
      if (s.id() == id) return &s;
    }
    return nullptr;
  }
};

TEST_F(SessionSummaryTest, BestSpeedupIsOverPassedTimedJobsOnly) {
  AddRun("s", "j1", v1::JOB_KIND_SUBMIT, v1::VERDICT_PASSED, 1.5, 1000);
  AddRun("s", "j2", v1::JOB_KIND_PROFILE, v1::VERDICT_PASSED, 2.25, 2000);
  // Failed runs do not count, however fast.
  AddRun("s", "j3", v1::JOB_KIND_SUBMIT, v1::VERDICT_FAILED, 9.0, 3000);
  // Nor do untimed tools.
  AddRun("s", "j4", v1::JOB_KIND_CORRECTNESS, v1::VERDICT_PASSED, 7.0, 4000);
  sessions_->Record("s", "get_gpu_specs", 1, v1::VERDICT_ERROR, "no GPU");

  auto list = agent_->ListSessions(50, /*strict=*/true);
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 1u);
  const v1::Session& s = (*list)[0];
  EXPECT_EQ(s.id(), "s");
  EXPECT_EQ(s.turns(), 5);
  EXPECT_EQ(s.best_speedup(), 2.25);
  EXPECT_EQ(s.last_tool(), "get_gpu_specs");
  EXPECT_EQ(s.last_verdict(), v1::VERDICT_ERROR);
}

TEST_F(SessionSummaryTest, SessionsWithoutTimedRunsOrTurns) {
  AddRun("compiled", "c1", v1::JOB_KIND_COMPILE, v1::VERDICT_COMPILE_ERROR, 0,
         1000);
  ASSERT_TRUE(store_->TouchSession("empty", "", 2000).ok());
  auto list = agent_->ListSessions(10, /*strict=*/true);
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 2u);
  const v1::Session* compiled = Find(*list, "compiled");
  ASSERT_NE(compiled, nullptr);
  EXPECT_EQ(compiled->best_speedup(), 0);
  EXPECT_EQ(compiled->last_tool(), "compile_kernel");
  EXPECT_EQ(compiled->last_verdict(), v1::VERDICT_COMPILE_ERROR);
  const v1::Session* empty = Find(*list, "empty");
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(empty->best_speedup(), 0);
  EXPECT_EQ(empty->last_tool(), "");
  EXPECT_EQ(empty->last_verdict(), v1::VERDICT_UNSPECIFIED);
}

TEST_F(SessionSummaryTest, LimitIsCheckedAndApplied) {
  AddRun("a", "ja", v1::JOB_KIND_SUBMIT, v1::VERDICT_PASSED, 1, 1000);
  AddRun("b", "jb", v1::JOB_KIND_SUBMIT, v1::VERDICT_PASSED, 1, 2000);
  auto one = agent_->ListSessions(1, /*strict=*/true);
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  for (int bad : {0, -1, 201}) {
    auto r = agent_->ListSessions(bad, /*strict=*/true);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr("limit must be from 1 to 200"));
  }
}

TEST_F(SessionSummaryTest, DetailHasTheProblemAndEachTurnsJob) {
  sessions_->Record("s", "get_problem", 1, v1::VERDICT_PASSED, "");
  AddRun("s", "j1", v1::JOB_KIND_SUBMIT, v1::VERDICT_PASSED, 1.5, 1000);
  auto d = agent_->GetSessionDetail("s");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->session.id(), "s");
  ASSERT_TRUE(d->problem.has_value());
  EXPECT_EQ(d->problem->name(), "gather_linear_fp32");
  for (const v1::ShapeSet& set : d->problem->shape_sets()) {
    EXPECT_FALSE(set.hidden()) << set.name();  // The public view.
  }
  ASSERT_EQ(d->turns.size(), 2u);
  EXPECT_EQ(d->turns[0].turn.tool(), "get_problem");
  EXPECT_FALSE(d->turns[0].job.has_value());
  ASSERT_TRUE(d->turns[1].job.has_value());
  EXPECT_EQ(d->turns[1].job->id(), "j1");
  EXPECT_EQ(d->turns[1].job->result().timing().speedup(), 1.5);

  EXPECT_EQ(agent_->GetSessionDetail("nope").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(SessionSummaryTest, DetailOfASessionWithAnUnknownProblemHasNone) {
  ASSERT_TRUE(store_->TouchSession("odd", "no_such_problem", 1000).ok());
  auto d = agent_->GetSessionDetail("odd");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_FALSE(d->problem.has_value());
  EXPECT_TRUE(d->turns.empty());
}

TEST_F(SessionSummaryTest, CompareCanSkipRecordingATurn) {
  AddRun("s", "j1", v1::JOB_KIND_SUBMIT, v1::VERDICT_PASSED, 1.5, 1000);
  AddRun("s", "j2", v1::JOB_KIND_SUBMIT, v1::VERDICT_PASSED, 2.0, 2000);
  auto quiet = agent_->CompareRuns("s", 1, 2, /*record_turn=*/false);
  ASSERT_TRUE(quiet.ok()) << quiet.status();
  EXPECT_EQ(quiet->speedup_change(), 0.5);
  EXPECT_EQ(store_->ListTurns("s")->size(), 2u);
  auto recorded = agent_->CompareRuns("s", 1, 2);
  ASSERT_TRUE(recorded.ok()) << recorded.status();
  EXPECT_EQ(store_->ListTurns("s")->size(), 3u);
  EXPECT_EQ(store_->ListTurns("s")->back().tool(), "compare_runs");
}

}  // namespace
}  // namespace kbench
