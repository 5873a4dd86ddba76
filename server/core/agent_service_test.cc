// AgentService: problems as agents are told them, sessions and their turns,
// and the comparison of two turns.
#include "server/core/agent_service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "server/core/core_fixtures.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

class AgentServiceTest : public testing::CoreFixture {
 protected:
  // A finished submit of `session`, with `source` stored, recorded as a
  // turn.
  void AddRun(const std::string& session, const std::string& id,
              const std::string& source, v1::Verdict verdict, double kernel_us,
              double speedup) {
    Run run;
    run.verdict = verdict;
    run.kernel_us = kernel_us;
    run.speedup = speedup;
    run.source = source;
    CoreFixture::AddRun(session, id, run);
  }
};

TEST_F(AgentServiceTest, GetProblemTellsWhatAnAgentNeeds) {
  absl::StatusOr<v1::GetProblemResponse> r =
      agent_->GetProblem("", "s-problem");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->problem().name(), "gather_linear_fp32");
  EXPECT_THAT(r->entry_prototype(), HasSubstr("const float* x"));
  EXPECT_THAT(r->contract(), HasSubstr("// @kb launch"));
  EXPECT_THAT(r->contract(), HasSubstr("R=4 B=12 H=32 K=56"));
  EXPECT_THAT(r->contract(), HasSubstr("extern \"C\" __global__ void "
                                       "gather_linear"));  // The example.
  for (const v1::ShapeSet& s : r->problem().shape_sets()) {
    EXPECT_FALSE(s.hidden());
  }
  // The call is a turn of the session.
  auto turns = store_->ListTurns("s-problem");
  ASSERT_TRUE(turns.ok());
  ASSERT_EQ(turns->size(), 1u);
  EXPECT_EQ((*turns)[0].tool(), "get_problem");

  EXPECT_EQ(agent_->GetProblem("nope", "").status().code(),
            absl::StatusCode::kNotFound);
  absl::StatusOr<v1::GetProblemResponse> bf16 =
      agent_->GetProblem("gather_linear_bf16", "");
  ASSERT_TRUE(bf16.ok());
  EXPECT_THAT(bf16->entry_prototype(), HasSubstr("__nv_bfloat16"));
}

TEST_F(AgentServiceTest, SessionsCreateGetListClose) {
  absl::StatusOr<v1::Session> s =
      agent_->CreateSession("gather_linear_bf16", "");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_THAT(s->id(), ::testing::StartsWith("s-"));
  EXPECT_EQ(s->problem(), "gather_linear_bf16");
  EXPECT_EQ(s->status(), "open");
  absl::StatusOr<v1::Session> named = agent_->CreateSession("", "my-run");
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->id(), "my-run");
  EXPECT_EQ(agent_->CreateSession("", "my-run").status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(agent_->CreateSession("no_such_problem", "").status().code(),
            absl::StatusCode::kNotFound);

  AddRun("my-run", "j-1", "a\n", v1::VERDICT_PASSED, 10, 1.2);
  absl::StatusOr<v1::GetSessionResponse> got = agent_->GetSession("my-run");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->turns_size(), 1);
  EXPECT_EQ(got->session().turns(), 1);

  absl::StatusOr<std::vector<v1::Session>> list = agent_->ListSessions(0);
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->size(), 2u);

  absl::StatusOr<v1::Session> closed = agent_->CloseSession("my-run");
  ASSERT_TRUE(closed.ok());
  EXPECT_EQ(closed->status(), "closed");
  EXPECT_EQ(agent_->GetSession("nope").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(AgentServiceTest, CompareRunsShowsDiffVerdictsAndChange) {
  AddRun("s1", "j-a", "int x = 1;\nslow();\n", v1::VERDICT_PASSED, 20, 0.5);
  AddRun("s1", "j-b", "int x = 1;\nfast();\n", v1::VERDICT_PASSED, 10, 1.0);
  absl::StatusOr<v1::CompareRunsResponse> c = agent_->CompareRuns("s1", 1, 2);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->a().job_id(), "j-a");
  EXPECT_EQ(c->b().job_id(), "j-b");
  EXPECT_EQ(c->a().verdict(), v1::VERDICT_PASSED);
  EXPECT_DOUBLE_EQ(c->kernel_time_change_pct(), -50.0);
  EXPECT_DOUBLE_EQ(c->speedup_change(), 0.5);
  EXPECT_EQ(c->lines_added(), 1);
  EXPECT_EQ(c->lines_removed(), 1);
  EXPECT_THAT(c->source_diff(), HasSubstr("-slow();"));
  EXPECT_THAT(c->source_diff(), HasSubstr("+fast();"));
  EXPECT_EQ(c->a().trials_passed(), 30);
  // The comparison is itself a turn (turn 3).
  auto turns = store_->ListTurns("s1");
  ASSERT_TRUE(turns.ok());
  ASSERT_EQ(turns->size(), 3u);
  EXPECT_EQ((*turns)[2].tool(), "compare_runs");
}

TEST_F(AgentServiceTest, CompareRunsRefusesWhatItCannotCompare) {
  AddRun("s2", "j-a", "x\n", v1::VERDICT_FAILED, 0, 0);
  sessions_->Record("s2", "get_gpu_specs", 0.1, v1::VERDICT_PASSED, "");
  EXPECT_EQ(agent_->CompareRuns("s2", 1, 9).status().code(),
            absl::StatusCode::kNotFound);
  absl::Status no_kernel = agent_->CompareRuns("s2", 1, 2).status();
  EXPECT_EQ(no_kernel.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(no_kernel.message()), HasSubstr("get_gpu_specs"));
  // Each refusal is a turn of the session (3 and 4), with its reason ...
  auto turns = store_->ListTurns("s2");
  ASSERT_TRUE(turns.ok());
  ASSERT_EQ(turns->size(), 4u);
  EXPECT_EQ((*turns)[2].tool(), "compare_runs");
  EXPECT_EQ((*turns)[2].verdict(), v1::VERDICT_REJECTED);
  EXPECT_THAT((*turns)[2].message(), HasSubstr("no turn 9"));
  EXPECT_THAT((*turns)[3].message(), HasSubstr("get_gpu_specs"));
  // ... but a call for an unknown session creates none.
  EXPECT_EQ(agent_->CompareRuns("nope", 1, 2).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetSession("nope").status().code(),
            absl::StatusCode::kNotFound);
  // Untimed turns compare without a time change.
  AddRun("s2", "j-c", "y\n", v1::VERDICT_FAILED, 0, 0);
  absl::StatusOr<v1::CompareRunsResponse> c = agent_->CompareRuns("s2", 1, 5);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->kernel_time_change_pct(), 0);
  EXPECT_EQ(c->b().trials_passed(), 12);
}

}  // namespace
}  // namespace kbench
