// A test fixture of kbd's core over a real store in a temp directory: the
// problems of the source tree, a job table, Sessions and an AgentService,
// and AddRun, which records a finished job as kbd does (its turn built by
// Sessions::TurnOf and written with it by Store::FinishJob).
#ifndef KBENCH_SERVER_CORE_CORE_FIXTURES_H_
#define KBENCH_SERVER_CORE_CORE_FIXTURES_H_

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "contract/problem_registry.h"
#include "server/core/agent_service.h"
#include "server/core/job_table.h"
#include "server/core/sessions.h"
#include "server/store/store.h"
#include "testing/process.h"

namespace kbench::testing {

class CoreFixture : public ::testing::Test {
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
    sessions_ = std::make_unique<Sessions>(Sessions::Options{}, store_.get());
    agent_ = std::make_unique<AgentService>(AgentService::Options{},
                                            sessions_.get(), store_.get(),
                                            problems_.get(), jobs_.get());
  }

  struct Run {
    v1::JobKind kind = v1::JOB_KIND_SUBMIT;
    v1::Verdict verdict = v1::VERDICT_PASSED;
    double kernel_us = 10;
    double speedup = 0;  // 0: untimed.
    int64_t when_ms = 1000;
    std::string source;  // Default: "// ID\n".
  };
  // Job `id` of `session`, finished with `run`, with its source stored.
  void AddRun(const std::string& session, const std::string& id,
              const Run& run) {
    const std::string digest = "d-" + id;
    ASSERT_TRUE(store_
                    ->PutSource(digest, run.source.empty() ? "// " + id + "\n"
                                                           : run.source)
                    .ok());
    ASSERT_TRUE(
        store_->TouchSession(session, "gather_linear_fp32", run.when_ms).ok());
    v1::Job job;
    job.set_id(id);
    job.set_kind(run.kind);
    job.set_stage(v1::STAGE_RUNNING);
    job.set_session_id(session);
    job.set_source_digest(digest);
    job.set_created_unix_ms(run.when_ms);
    ASSERT_TRUE(store_->InsertJob(job, v1::KernelRequest()).ok());
    job.set_stage(v1::STAGE_DONE);
    job.set_finished_unix_ms(run.when_ms + 5);
    v1::JobResult* r = job.mutable_result();
    r->set_verdict(run.verdict);
    if (run.speedup > 0) {
      r->mutable_timing()->mutable_kernel()->set_median_us(run.kernel_us);
      r->mutable_timing()->mutable_reference()->set_median_us(run.kernel_us *
                                                              run.speedup);
      r->mutable_timing()->set_speedup(run.speedup);
    }
    r->mutable_correctness()->set_trials_run(30);
    r->mutable_correctness()->set_trials_passed(
        run.verdict == v1::VERDICT_PASSED ? 30 : 12);
    const std::optional<Store::SessionTurn> turn = sessions_->TurnOf(job);
    ASSERT_TRUE(turn.has_value());
    ASSERT_TRUE(store_->FinishJob(job, &*turn).ok());
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<ProblemRegistry> problems_;
  std::unique_ptr<JobTable> jobs_;
  std::unique_ptr<Sessions> sessions_;
  std::unique_ptr<AgentService> agent_;
};

}  // namespace kbench::testing

#endif  // KBENCH_SERVER_CORE_CORE_FIXTURES_H_
