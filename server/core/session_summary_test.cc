// AgentService's views for the dashboard: session summaries (best speedup
// over passed timed jobs, last tool and verdict), session details (problem,
// turns with their jobs), and CompareRuns without recording a turn.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "server/core/agent_service.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

class SessionSummaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = Store::Open({dir_.path() + "/kbench.db"});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    auto problems = ProblemRegistry::LoadDir(std::string(KBENCH_SOURCE_DIR) +
                                             "/kernels/problems");
    ASSERT_TRUE(problems.ok()) << problems.status();
    problems_ = std::move(*problems);
    jobs_ = std::make_unique<JobTable>(JobTable::Options{}, store_.get());
    agent_ = std::make_unique<AgentService>(
        AgentService::Options{}, store_.get(), problems_.get(), jobs_.get());
  }

  // A finished job of `kind` in `session`, recorded as a turn of `tool`.
  void AddRun(const std::string& session, const std::string& id,
              v1::JobKind kind, const std::string& tool, v1::Verdict verdict,
              double speedup, int64_t when_ms) {
    const std::string digest = "d-" + id;
    ASSERT_TRUE(store_->PutSource(digest, "// " + id + "\n").ok());
    ASSERT_TRUE(
        store_->TouchSession(session, "gather_linear_fp32", when_ms).ok());
    v1::Job job;
    job.set_id(id);
    job.set_kind(kind);
    job.set_stage(v1::STAGE_DONE);
    job.set_session_id(session);
    job.set_source_digest(digest);
    job.set_created_unix_ms(when_ms);
    job.mutable_result()->set_verdict(verdict);
    if (speedup > 0) {
      job.mutable_result()->mutable_timing()->set_speedup(speedup);
      job.mutable_result()->mutable_timing()->mutable_kernel()->set_median_us(
          10);
    }
    ASSERT_TRUE(store_->InsertJob(job, v1::KernelRequest()).ok());
    v1::Turn turn;
    turn.set_session_id(session);
    turn.set_tool(tool);
    turn.set_job_id(id);
    turn.set_source_digest(digest);
    turn.set_verdict(verdict);
    turn.set_created_unix_ms(when_ms);
    ASSERT_TRUE(store_->AppendTurn(turn).ok());
  }

  const AgentService::SessionSummary* Find(
      const std::vector<AgentService::SessionSummary>& list,
      const std::string& id) {
    for (const AgentService::SessionSummary& s : list) {
      if (s.session.id() == id) return &s;
    }
    return nullptr;
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<ProblemRegistry> problems_;
  std::unique_ptr<JobTable> jobs_;
  std::unique_ptr<AgentService> agent_;
};

TEST_F(SessionSummaryTest, BestSpeedupIsOverPassedTimedJobsOnly) {
  AddRun("s", "j1", v1::JOB_KIND_SUBMIT, "submit_kernel", v1::VERDICT_PASSED,
         1.5, 1000);
  AddRun("s", "j2", v1::JOB_KIND_PROFILE, "profile_kernel", v1::VERDICT_PASSED,
         2.25, 2000);
  // Failed runs do not count, however fast.
  AddRun("s", "j3", v1::JOB_KIND_SUBMIT, "submit_kernel", v1::VERDICT_FAILED,
         9.0, 3000);
  // Nor do untimed tools.
  AddRun("s", "j4", v1::JOB_KIND_CORRECTNESS, "run_correctness",
         v1::VERDICT_PASSED, 7.0, 4000);
  agent_->RecordTurn("s", "get_gpu_specs", 1, v1::VERDICT_ERROR, "no GPU");

  auto list = agent_->ListSessionSummaries(50);
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 1u);
  const AgentService::SessionSummary& s = (*list)[0];
  EXPECT_EQ(s.session.id(), "s");
  EXPECT_EQ(s.session.turns(), 5);
  EXPECT_EQ(s.best_speedup, 2.25);
  EXPECT_EQ(s.last_tool, "get_gpu_specs");
  EXPECT_EQ(s.last_verdict, v1::VERDICT_ERROR);

  // Cached speedups give the same answer.
  auto again = agent_->ListSessionSummaries(50);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[0].best_speedup, 2.25);
}

TEST_F(SessionSummaryTest, SessionsWithoutTimedRunsOrTurns) {
  AddRun("compiled", "c1", v1::JOB_KIND_COMPILE, "compile_kernel",
         v1::VERDICT_COMPILE_ERROR, 0, 1000);
  ASSERT_TRUE(store_->TouchSession("empty", "", 2000).ok());
  auto list = agent_->ListSessionSummaries(10);
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 2u);
  const AgentService::SessionSummary* compiled = Find(*list, "compiled");
  ASSERT_NE(compiled, nullptr);
  EXPECT_EQ(compiled->best_speedup, 0);
  EXPECT_EQ(compiled->last_tool, "compile_kernel");
  EXPECT_EQ(compiled->last_verdict, v1::VERDICT_COMPILE_ERROR);
  const AgentService::SessionSummary* empty = Find(*list, "empty");
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(empty->best_speedup, 0);
  EXPECT_EQ(empty->last_tool, "");
  EXPECT_EQ(empty->last_verdict, v1::VERDICT_UNSPECIFIED);
}

TEST_F(SessionSummaryTest, LimitIsCheckedAndApplied) {
  AddRun("a", "ja", v1::JOB_KIND_SUBMIT, "submit_kernel", v1::VERDICT_PASSED, 1,
         1000);
  AddRun("b", "jb", v1::JOB_KIND_SUBMIT, "submit_kernel", v1::VERDICT_PASSED, 1,
         2000);
  auto one = agent_->ListSessionSummaries(1);
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  for (int bad : {0, -1, 201}) {
    auto r = agent_->ListSessionSummaries(bad);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr("limit must be from 1 to 200"));
  }
}

TEST_F(SessionSummaryTest, DetailHasTheProblemAndEachTurnsJob) {
  agent_->RecordTurn("s", "get_problem", 1, v1::VERDICT_PASSED, "");
  AddRun("s", "j1", v1::JOB_KIND_SUBMIT, "submit_kernel", v1::VERDICT_PASSED,
         1.5, 1000);
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
  AddRun("s", "j1", v1::JOB_KIND_SUBMIT, "submit_kernel", v1::VERDICT_PASSED,
         1.5, 1000);
  AddRun("s", "j2", v1::JOB_KIND_SUBMIT, "submit_kernel", v1::VERDICT_PASSED,
         2.0, 2000);
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
