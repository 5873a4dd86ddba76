// Hidden cases as kbd's core draws them: every submission carries every
// size class's cases, drawn afresh from kbd's secret for each job (and the
// same again when a job is recovered after a restart); run_correctness's
// `random` set is drawn afresh and shown; a failing hidden case reaches the
// caller as its class, never its dims or seed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/digest.h"
#include "contract/holdout.h"
#include "server/core/job_service_fixtures.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::PassedFor;

class HoldoutJobsTest : public testing::JobServiceFixture {};

// The digest of a job's drawn hidden sets, and checks of their layout.
std::string HiddenDraw(const v1::RunnerJob& job, const v1::Problem& problem) {
  std::string digest;
  std::map<std::string, int> counts;
  for (const v1::ShapeSet& s : job.check_sets()) {
    if (!absl::StartsWith(s.name(), kHoldoutSetPrefix)) continue;
    EXPECT_TRUE(s.hidden()) << s.name();
    counts[s.name()] = s.shapes_size();
    digest += ProtoDigest(s);
  }
  for (const v1::HoldoutClass& c : problem.holdout_classes()) {
    EXPECT_EQ(counts[absl::StrCat(kHoldoutSetPrefix, c.name())], c.count())
        << c.name();
  }
  return digest;
}

TEST_F(HoldoutJobsTest, EverySubmissionDrawsEveryClassAfresh) {
  const v1::Problem& problem = job_problem();
  auto a = SubmitAndLease(v1::JOB_KIND_SUBMIT, Request());
  auto b = SubmitAndLease(v1::JOB_KIND_SUBMIT, Request(), "host:gpu1");
  ASSERT_TRUE(a.has_value() && b.has_value());
  const std::string da = HiddenDraw(a->job, problem);
  const std::string db = HiddenDraw(b->job, problem);
  EXPECT_FALSE(da.empty());
  EXPECT_NE(da, db);  // Same source, another submission: other cases.
  // The public sets are checked too, and no repository set is hidden.
  int visible = 0;
  for (const v1::ShapeSet& s : a->job.check_sets()) {
    if (s.hidden()) {
      EXPECT_TRUE(absl::StartsWith(s.name(), kHoldoutSetPrefix)) << s.name();
    } else {
      ++visible;
    }
  }
  EXPECT_EQ(visible, problem.check_shape_sets_size());
  // A correctness check has no hidden cases.
  auto c = SubmitAndLease(v1::JOB_KIND_CORRECTNESS, Request(), "host:gpu2");
  ASSERT_TRUE(c.has_value());
  for (const v1::ShapeSet& s : c->job.check_sets()) EXPECT_FALSE(s.hidden());
}

TEST_F(HoldoutJobsTest, ARecoveredSubmissionRunsTheSameCases) {
  workers_->Touch(testing::Worker(), absl::Now());
  auto first = SubmitAndLease(v1::JOB_KIND_SUBMIT, Request());
  ASSERT_TRUE(first.has_value());
  const std::string drawn = HiddenDraw(first->job, job_problem());
  // kbd stops with the job leased; the same data dir keeps the secret.
  Destroy();
  Build(/*worker_grace=*/absl::Seconds(30));
  service_->Recover();
  workers_->Touch(testing::Worker(), absl::Now());
  auto lease = std::make_shared<std::optional<Scheduler::Lease>>();
  auto leased = std::make_shared<absl::Notification>();
  ASSERT_TRUE(scheduler_
                  ->RequestLease(testing::Worker(), absl::Seconds(10),
                                 [lease, leased](auto l) {
                                   *lease = std::move(l);
                                   leased->Notify();
                                 })
                  .ok());
  ASSERT_TRUE(leased->WaitForNotificationWithTimeout(absl::Seconds(20)));
  ASSERT_TRUE(lease->has_value());
  EXPECT_EQ((*lease)->job.job_id(), first->job.job_id());
  EXPECT_EQ(HiddenDraw((*lease)->job, job_problem()), drawn);
}

TEST_F(HoldoutJobsTest, AFailingHiddenCaseIsNamedByItsClassOnly) {
  auto lease = SubmitAndLease(v1::JOB_KIND_SUBMIT, Request());
  ASSERT_TRUE(lease.has_value());
  v1::JobResult r = PassedFor(lease->job);
  r.set_verdict(v1::VERDICT_FAILED);
  v1::CorrectnessReport* c = r.mutable_correctness();
  c->set_passed(false);
  const v1::ShapeSet* mid = nullptr;
  for (const v1::ShapeSet& s : lease->job.check_sets()) {
    if (s.name() == "hidden:mid") mid = &s;
  }
  ASSERT_NE(mid, nullptr);
  const std::string b = absl::StrCat(mid->shapes(0).dims().at("B"));
  for (v1::TrialResult& t : *c->mutable_trials()) {
    if (t.shape_set() != "hidden:mid") continue;
    t.set_hidden(true);
    t.set_passed(false);
    t.mutable_dims()->insert(mid->shapes(0).dims().begin(),
                             mid->shapes(0).dims().end());
    t.set_seed(987654321);
    t.set_first_mismatch("b=300 k=17");
    t.set_elements(1001);
    t.set_nan_count(77);
    break;
  }
  c->set_trials_passed(c->trials_size() - 1);
  const std::string message =
      absl::StrCat("failed on a hidden ", mid->description(),
                   ": 77 of 1001 outputs are NaN or unwritten");
  c->set_message(message);
  r.set_message(message);
  ASSERT_TRUE(
      scheduler_->Complete("host:gpu0", lease->lease_id, std::move(r)).ok());
  const v1::Job done = WaitForStage(lease->job.job_id(), v1::STAGE_DONE);
  EXPECT_EQ(done.result().verdict(), v1::VERDICT_FAILED);
  EXPECT_THAT(done.result().message(),
              HasSubstr("failed on a hidden mid-size case (R in 1..8, B in "
                        "257..4096"));
  EXPECT_THAT(done.result().message(), HasSubstr("77 of 1001"));
  const std::string all = done.DebugString();
  EXPECT_THAT(all, Not(HasSubstr("987654321")));
  EXPECT_THAT(all, Not(HasSubstr("b=300")));
  for (const v1::TrialResult& t : done.result().correctness().trials()) {
    if (!t.hidden()) continue;
    EXPECT_TRUE(t.dims().empty());
    EXPECT_EQ(t.seed(), 0u);
    EXPECT_TRUE(absl::StartsWith(t.shape_set(), kHoldoutSetPrefix))
        << t.shape_set();
    EXPECT_EQ(t.shape(), "");
  }
}

TEST_F(HoldoutJobsTest, RunCorrectnessDrawsTheRandomSetAfreshAndShowsIt) {
  v1::KernelRequest req = Request();
  req.set_shape_set(kRandomShapeSet);
  auto a = SubmitAndLease(v1::JOB_KIND_CORRECTNESS, req);
  auto b = SubmitAndLease(v1::JOB_KIND_CORRECTNESS, req, "host:gpu1");
  ASSERT_TRUE(a.has_value() && b.has_value());
  ASSERT_EQ(a->job.check_sets_size(), 1);
  const v1::ShapeSet& set = a->job.check_sets(0);
  EXPECT_EQ(set.name(), kRandomShapeSet);
  EXPECT_FALSE(set.hidden());
  EXPECT_EQ(set.shapes(0).dims().size(), 4u);
  EXPECT_NE(ProtoDigest(set), ProtoDigest(b->job.check_sets(0)));
  // The trials come back with their dims (the set is not hidden).
  v1::JobResult r = PassedFor(a->job);
  for (v1::TrialResult& t : *r.mutable_correctness()->mutable_trials()) {
    for (const v1::Shape& s : set.shapes()) {
      if (s.name() == t.shape()) {
        t.mutable_dims()->insert(s.dims().begin(), s.dims().end());
      }
    }
  }
  ASSERT_TRUE(
      scheduler_->Complete("host:gpu0", a->lease_id, std::move(r)).ok());
  const v1::Job done = WaitForStage(a->job.job_id(), v1::STAGE_DONE);
  EXPECT_EQ(done.result().verdict(), v1::VERDICT_PASSED);
  ASSERT_GT(done.result().correctness().trials_size(), 0);
  EXPECT_EQ(done.result().correctness().trials(0).shape_set(), "random");
  EXPECT_EQ(done.result().correctness().trials(0).dims().size(), 4u);
}

TEST_F(HoldoutJobsTest, OnlyRunCorrectnessTakesTheRandomSet) {
  workers_->Touch(testing::Worker(), absl::Now());
  v1::KernelRequest req = Request();
  req.set_shape_set(kRandomShapeSet);
  for (v1::JobKind kind :
       {v1::JOB_KIND_SUBMIT, v1::JOB_KIND_PROFILE, v1::JOB_KIND_SANITIZE}) {
    absl::StatusOr<v1::Job> job = service_->Submit(kind, req);
    EXPECT_EQ(job.status().code(), absl::StatusCode::kInvalidArgument)
        << v1::JobKind_Name(kind);
    EXPECT_THAT(job.status().message(), HasSubstr("only run_correctness"));
  }
  req.set_shape_set("holdout");  // The old fixed set is gone.
  EXPECT_EQ(service_->Submit(v1::JOB_KIND_SUBMIT, req).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace kbench
