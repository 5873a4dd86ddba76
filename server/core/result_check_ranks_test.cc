// CheckWorkerResult (server/core/result_check.h) on the timing of a
// problem that spans GPUs: each rank's own figures beside the joined ones,
// taken only as a runner could have measured them.
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/result_check.h"
#include "server/core/result_check_fixtures.h"

namespace kbench {
namespace {

using ::kbench::result_check_fixtures::Gpu;
using ::kbench::result_check_fixtures::Honest;
using ::kbench::result_check_fixtures::Job;
using ::kbench::result_check_fixtures::Stats;
using ::testing::HasSubstr;

// A submit of a problem that spans two GPUs reports each rank's own
// figures beside the joined ones; kbd takes them only as a runner could
// have measured them.
TEST(ResultCheckTest, EachRanksFiguresAreCheckedAgainstTheJoinedOnes) {
  v1::RunnerJob job = Job(v1::JOB_KIND_SUBMIT);
  job.mutable_problem()->set_world_size(2);
  v1::JobResult honest = Honest(job);
  for (int r = 0; r < 2; ++r) {
    v1::RankTiming* mine = honest.mutable_timing()->add_ranks();
    mine->set_rank(r);
    *mine->mutable_kernel() = Stats(9 + r);  // The joined median is 10.
    *mine->mutable_reference() = Stats(20);
  }
  EXPECT_TRUE(CheckWorkerResult(job, Gpu(), honest).ok())
      << CheckWorkerResult(job, Gpu(), honest);

  struct Forgery {
    const char* name;
    std::function<void(v1::JobResult*)> edit;
    const char* expected;
  };
  const Forgery forgeries[] = {
      {"a rank slower than the slowest",
       [](v1::JobResult* r) {
         *r->mutable_timing()->mutable_ranks(1)->mutable_kernel() = Stats(12);
       },
       "timing.ranks[1].kernel median 12 us is above the joined median 10 "
       "us"},
      {"ranks out of order",
       [](v1::JobResult* r) {
         r->mutable_timing()->mutable_ranks(0)->set_rank(1);
       },
       "timing.ranks[0].rank is 1, not 0"},
      {"a third rank",
       [](v1::JobResult* r) { r->mutable_timing()->add_ranks()->set_rank(2); },
       "timing.ranks has 3 entries, but the job's problem spans 2 GPUs"},
      {"a rank without samples",
       [](v1::JobResult* r) {
         r->mutable_timing()->mutable_ranks(0)->mutable_reference()->set_n(0);
       },
       "timing.ranks[0].reference has no samples"},
      {"a GPU time where the joined one is missing",
       [](v1::JobResult* r) {
         *r->mutable_timing()->mutable_ranks(0)->mutable_kernel_gpu() =
             Stats(5);
       },
       "timing.ranks[0].kernel_gpu median 5 us is above the joined median 0"},
  };
  for (const Forgery& f : forgeries) {
    v1::JobResult r = honest;
    f.edit(&r);
    const absl::Status s = CheckWorkerResult(job, Gpu(), r);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << f.name;
    EXPECT_THAT(s.message(), HasSubstr(f.expected)) << f.name;
  }
  // A one-GPU job has no ranks.
  v1::RunnerJob one = Job(v1::JOB_KIND_SUBMIT);
  v1::JobResult r = Honest(one);
  r.mutable_timing()->add_ranks();
  EXPECT_THAT(CheckWorkerResult(one, Gpu(), r).message(),
              HasSubstr("timing.ranks has 1 entries, but the job's problem "
                        "spans 1 GPU"));
}

}  // namespace
}  // namespace kbench
