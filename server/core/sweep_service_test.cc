// SweepService on kbd's core in-process (JobServiceFixture: a real Store,
// the shipped problems, NVRTC in this process): a compile sweep of the core
// suite end to end, a correctness sweep whose jobs a worker played by the
// test runs, every refusal of a batch that cannot be a sweep, and a sweep
// read back after a restart.
#include "server/core/sweep_service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/core/job_service_fixtures.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

class SweepServiceTest : public testing::JobServiceFixture {
 protected:
  SweepService* sweeps() { return core_->sweep_service(); }

  // The example kernel of problem folder `name`.
  static v1::KernelRequest Example(const std::string& name) {
    v1::KernelRequest k;
    k.set_source(testing::ReadSourceFile(
        absl::StrCat("kernels/problems/", name, "/example.cu")));
    k.set_filename(absl::StrCat(name, ".cu"));
    return k;
  }

  static v1::KernelRequest Naive(const std::string& file) {
    v1::KernelRequest k;
    k.set_source(testing::ReadSourceFile("kernels/examples/" + file));
    k.set_filename(file);
    return k;
  }

  // GetSweep until it is done (or 60 s).
  v1::Sweep WaitDone(const std::string& id) {
    v1::Sweep sweep;
    EXPECT_TRUE(testing::Eventually(
        [&] {
          absl::StatusOr<v1::Sweep> s = sweeps()->Get(id);
          if (s.ok()) sweep = *s;
          return s.ok() && s->done();
        },
        absl::Seconds(60)));
    return sweep;
  }

  static const v1::SweepRow* Row(const v1::Sweep& s, const std::string& p) {
    for (const v1::SweepRow& r : s.rows()) {
      if (r.problem() == p) return &r;
    }
    return nullptr;
  }
};

TEST_F(SweepServiceTest, ACompileSweepHasARowPerProblemOfTheSuite) {
  v1::SubmitSweepRequest request;
  request.set_suite("core");
  request.set_kind(v1::JOB_KIND_COMPILE);
  // By the `// @kb problem` line of each source.
  *request.add_kernels() = Example("softmax_fp32");
  *request.add_kernels() = Example("row_sum_fp32");
  absl::StatusOr<v1::Sweep> sweep = sweeps()->Submit(request);
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  EXPECT_THAT(sweep->id(), ::testing::StartsWith("sw-"));
  EXPECT_EQ(sweep->suite(), "core");
  EXPECT_EQ(sweep->kind(), v1::JOB_KIND_COMPILE);
  EXPECT_EQ(sweep->rows_size(), 8);  // Every problem of the suite.
  EXPECT_EQ(sweep->jobs(), 2);

  const v1::Sweep done = WaitDone(sweep->id());
  EXPECT_TRUE(done.done());
  EXPECT_EQ(done.passed(), 2);
  EXPECT_EQ(done.geomean_speedup(), 0);  // Nothing was timed.
  for (const v1::SweepRow& row : done.rows()) {
    if (row.problem() == "softmax_fp32" || row.problem() == "row_sum_fp32") {
      EXPECT_EQ(row.verdict(), v1::VERDICT_PASSED) << row.message();
      EXPECT_EQ(row.stage(), v1::STAGE_DONE);
      EXPECT_EQ(row.filename(), row.problem() + ".cu");
      EXPECT_GE(row.wall_ms(), 0);
      absl::StatusOr<v1::Job> job = service_->GetJob(row.job_id());
      ASSERT_TRUE(job.ok());
      EXPECT_EQ(job->sweep_id(), sweep->id());
    } else {
      EXPECT_TRUE(row.job_id().empty()) << row.problem();
      EXPECT_EQ(row.verdict(), v1::VERDICT_UNSPECIFIED);
    }
  }
  // Stored: a restarted kbd reads the same table.
  Destroy();
  Build();
  absl::StatusOr<v1::Sweep> again = sweeps()->Get(sweep->id());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->passed(), 2);
  EXPECT_TRUE(again->done());
}

// A plan written as an LLM might ("R×1") is that row's refusal, quoting the
// whole character: a message cut inside a UTF-8 character could not be
// stored, and the sweep failed as "store not writable" (review, 2026-12-05).
// The sweep is stamped after its jobs, so that retention, which keeps
// sweeps no older than the oldest unfinished job, keeps it while they run.
TEST_F(SweepServiceTest, ARowRefusedForANonAsciiPlanIsStoredAndSaysWhy) {
  v1::SubmitSweepRequest request;
  request.set_suite("core");
  request.set_kind(v1::JOB_KIND_COMPILE);
  *request.add_kernels() = Example("softmax_fp32");
  v1::KernelRequest bad = Example("row_sum_fp32");
  const std::string plan = "grid(R)";
  const size_t at = bad.source().find(plan);
  ASSERT_NE(at, std::string::npos);
  bad.mutable_source()->replace(at, plan.size(),
                                "grid(R\xc3\x97"
                                "1)");
  // Named, so that the sweep's own look at the `// @kb` lines passes it on
  // and the job's preparation refuses it: a refused row, not a refused batch.
  bad.set_problem("row_sum_fp32");
  *request.add_kernels() = bad;
  absl::StatusOr<v1::Sweep> sweep = sweeps()->Submit(request);
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  const v1::SweepRow* row = Row(*sweep, "row_sum_fp32");
  ASSERT_NE(row, nullptr);
  EXPECT_TRUE(row->job_id().empty());
  EXPECT_EQ(row->error().code(),
            static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(row->error().message(), HasSubstr("unexpected '\xc3\x97'"));
  const v1::SweepRow* ok = Row(*sweep, "softmax_fp32");
  ASSERT_NE(ok, nullptr);
  absl::StatusOr<v1::Job> job = service_->GetJob(ok->job_id());
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_GE(sweep->created_unix_ms(), job->created_unix_ms());
  absl::StatusOr<v1::Sweep> stored = sweeps()->Get(sweep->id());
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_THAT(Row(*stored, "row_sum_fp32")->error().message(),
              HasSubstr("\xc3\x97"));
}

TEST_F(SweepServiceTest, ACorrectnessSweepRunsOnAWorker) {
  workers_->Touch(testing::Worker(), absl::Now());
  v1::SubmitSweepRequest request;
  request.set_suite("collectives");
  request.set_kind(v1::JOB_KIND_CORRECTNESS);
  *request.add_kernels() = Naive("gather_linear_naive.cu");
  *request.add_kernels() = Naive("gather_linear_naive_bf16.cu");
  *request.add_kernels() = Example("linear_reduce_scatter_fp32");
  absl::StatusOr<v1::Sweep> sweep = sweeps()->Submit(request);
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  EXPECT_EQ(sweep->jobs(), 3);

  for (int i = 0; i < 3; ++i) {
    const std::string worker_id = absl::StrCat("host:gpu", i);
    const v1::WorkerInfo worker = testing::Worker(worker_id);
    workers_->Touch(worker, absl::Now());
    const std::optional<Scheduler::Lease> lease =
        LeaseAs(worker, absl::Seconds(20));
    ASSERT_TRUE(lease.has_value());
    // Every problem is data: each job carries its golden's cubin.
    EXPECT_FALSE(lease->job.golden_cubin().empty());
    ASSERT_TRUE(scheduler_
                    ->Complete(worker_id, lease->lease_id,
                               testing::PassedFor(lease->job))
                    .ok());
  }
  const v1::Sweep done = WaitDone(sweep->id());
  EXPECT_EQ(done.passed(), 3);
  EXPECT_EQ(Row(done, "gather_linear_fp32")->verdict(), v1::VERDICT_PASSED);
  EXPECT_EQ(Row(done, "gather_linear_bf16")->verdict(), v1::VERDICT_PASSED);
  EXPECT_EQ(Row(done, "linear_reduce_scatter_fp32")->verdict(),
            v1::VERDICT_PASSED);
  EXPECT_TRUE(Row(done, "allreduce_residual_rmsnorm_fp32")->job_id().empty());
}

TEST_F(SweepServiceTest, ABatchThatCannotBeASweepIsRefusedWhole) {
  auto submit = [this](const v1::SubmitSweepRequest& r) {
    return sweeps()->Submit(r).status();
  };
  v1::SubmitSweepRequest r;
  r.set_kind(v1::JOB_KIND_COMPILE);
  *r.add_kernels() = Example("softmax_fp32");
  EXPECT_THAT(submit(r).message(), HasSubstr("suite is empty"));
  r.set_suite("no_such_suite");
  EXPECT_EQ(submit(r).code(), absl::StatusCode::kNotFound);
  r.set_suite("bad suite\n");
  EXPECT_EQ(submit(r).code(), absl::StatusCode::kInvalidArgument);

  r.set_suite("core");
  v1::SubmitSweepRequest empty = r;
  empty.clear_kernels();
  EXPECT_THAT(submit(empty).message(), HasSubstr("kernels is empty"));

  v1::SubmitSweepRequest kind = r;
  kind.set_kind(static_cast<v1::JobKind>(99));
  EXPECT_THAT(submit(kind).message(), HasSubstr("kind must be"));

  v1::SubmitSweepRequest blank = r;
  blank.mutable_kernels(0)->clear_source();
  EXPECT_THAT(submit(blank).message(),
              HasSubstr("kernels[0] (softmax_fp32.cu): source is empty"));

  v1::SubmitSweepRequest other = r;
  *other.add_kernels() = Naive("gather_linear_naive.cu");
  absl::Status s = submit(other);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("kernels[1] (gather_linear_naive.cu) is for problem "
                        "'gather_linear_fp32', which is not in suite 'core'"));

  v1::SubmitSweepRequest twice = r;
  *twice.add_kernels() = Example("softmax_fp32");
  twice.mutable_kernels(1)->set_filename("again.cu");
  EXPECT_THAT(submit(twice).message(),
              HasSubstr("kernels[1] (again.cu) is for problem 'softmax_fp32', "
                        "as kernels[0] (softmax_fp32.cu) is"));

  // A source whose plan does not parse; one whose plan names no problem.
  v1::SubmitSweepRequest unparsed = r;
  unparsed.mutable_kernels(0)->set_source("__global__ void k() {}\n");
  s = submit(unparsed);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("kernels[0] (softmax_fp32.cu): "));
  v1::SubmitSweepRequest unnamed = r;
  std::string source = unnamed.kernels(0).source();
  const size_t line = source.find("// @kb problem softmax_fp32");
  ASSERT_NE(line, std::string::npos);
  source.erase(line, source.find('\n', line) - line);
  unnamed.mutable_kernels(0)->set_source(source);
  EXPECT_THAT(submit(unnamed).message(), HasSubstr("names no problem"));

  v1::SubmitSweepRequest not_utf8 = r;
  not_utf8.mutable_kernels(0)->mutable_source()->append("// \xff\xfe\n");
  s = submit(not_utf8);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("kernels[0] (softmax_fp32.cu): source"));

  v1::SubmitSweepRequest bad_name = r;
  bad_name.mutable_kernels(0)->set_filename("../../etc/passwd");
  EXPECT_EQ(submit(bad_name).code(), absl::StatusCode::kInvalidArgument);

  v1::SubmitSweepRequest many = r;
  for (int i = 0; i < 256; ++i) *many.add_kernels() = Example("softmax_fp32");
  EXPECT_THAT(submit(many).message(), HasSubstr("at most 256 kernels"));

  v1::SubmitSweepRequest one_big = r;
  one_big.mutable_kernels(0)->mutable_source()->append(300 << 10, ' ');
  s = submit(one_big);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("the limit is 262144 bytes per kernel"));

  v1::SubmitSweepRequest big = r;
  big.mutable_kernels(0)->mutable_source()->append(int64_t{17} << 20, ' ');
  EXPECT_THAT(submit(big).message(), HasSubstr("bytes of source"));

  // Every kernel refused by JobService: the first refusal, nothing stored.
  v1::SubmitSweepRequest refused = r;
  refused.mutable_kernels(0)->set_shape_set("no_such_set");
  s = submit(refused);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("kernels[0] (softmax_fp32.cu): "));
  EXPECT_THAT(s.message(), HasSubstr("no_such_set"));
  absl::StatusOr<Store::JobPage> jobs = store_->ListJobs({});
  ASSERT_TRUE(jobs.ok());
  EXPECT_TRUE(jobs->jobs.empty());
}

// A full kbd refuses a sweep whole (no half sweep), and then single jobs.
TEST_F(SweepServiceTest, AFullKbdRefusesASweepWholeAndThenAJob) {
  Destroy();
  Build(absl::ZeroDuration(), 1, /*max_unfinished_jobs=*/2);
  workers_->Touch(testing::Worker(), absl::Now());
  // Correctness jobs stay unfinished: no worker leases them.
  ASSERT_TRUE(service_->Submit(v1::JOB_KIND_CORRECTNESS, Request()).ok());
  v1::SubmitSweepRequest request;
  request.set_suite("collectives");
  request.set_kind(v1::JOB_KIND_CORRECTNESS);
  *request.add_kernels() = Naive("gather_linear_naive.cu");
  *request.add_kernels() = Naive("gather_linear_naive_bf16.cu");
  absl::Status full = sweeps()->Submit(request).status();
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(full.message(), HasSubstr("kbd holds 1 unfinished jobs and "
                                        "takes at most 2 at once"));
  EXPECT_THAT(full.message(), HasSubstr("so not 2 more"));
  absl::StatusOr<Store::JobPage> jobs = store_->ListJobs({});
  ASSERT_TRUE(jobs.ok());
  EXPECT_EQ(jobs->jobs.size(), 1u);

  ASSERT_TRUE(service_->Submit(v1::JOB_KIND_CORRECTNESS, Request()).ok());
  absl::Status third =
      service_->Submit(v1::JOB_KIND_CORRECTNESS, Request()).status();
  EXPECT_EQ(third.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(third.message(), HasSubstr("--max-unfinished-jobs"));
  // A compile job needs a slot too.
  EXPECT_EQ(service_->Submit(v1::JOB_KIND_COMPILE, Request()).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST_F(SweepServiceTest, GetSweepChecksTheId) {
  EXPECT_EQ(sweeps()->Get("").status().code(),
            absl::StatusCode::kInvalidArgument);
  const absl::Status bad = sweeps()->Get("s-../x").status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(), HasSubstr("as SubmitSweep returned it"));
  absl::Status missing = sweeps()->Get("sw-000000000000").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("no sweep 'sw-000000000000'"));
}

}  // namespace
}  // namespace kbench
