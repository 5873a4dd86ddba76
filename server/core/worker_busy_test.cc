// Tests of WorkerRegistry's usage figures (server/core/worker_registry.h), with
// explicit times: busy seconds summed over ended jobs plus the running
// job's time so far, jobs per minute over the last ten minutes, and
// LiveStats / AllStats.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/core/worker_registry.h"

namespace kbench {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1700000000);

v1::WorkerInfo Info(const std::string& id) {
  v1::WorkerInfo info;
  info.set_worker_id(id);
  info.set_hostname("host-" + id);
  info.mutable_spec()->set_name("GPU " + id);
  return info;
}

WorkerRegistry::Options Liveness(absl::Duration d) {
  WorkerRegistry::Options o;
  o.liveness = d;
  return o;
}

// The stats of the one live worker at `now`.
WorkerRegistry::WorkerStats Only(const WorkerRegistry& r, absl::Time now) {
  std::vector<WorkerRegistry::WorkerStats> s = r.LiveStats(now);
  EXPECT_EQ(s.size(), 1u);
  return s.empty() ? WorkerRegistry::WorkerStats{} : s[0];
}

TEST(WorkerBusyTest, NewWorkerHasNoUsage) {
  WorkerRegistry r(Liveness(absl::Hours(1)));
  r.Touch(Info("w"), kT0);
  WorkerRegistry::WorkerStats s = Only(r, kT0 + absl::Minutes(5));
  EXPECT_EQ(s.gpu.worker_id(), "w");
  EXPECT_EQ(s.busy_seconds, 0);
  EXPECT_EQ(s.jobs_per_minute, 0);
}

TEST(WorkerBusyTest, BusyTimeSumsEndedJobsAndTheRunningOne) {
  WorkerRegistry r(Liveness(absl::Hours(1)));
  r.Touch(Info("w"), kT0);
  r.SetCurrentJob("w", "j1", kT0 + absl::Seconds(10));
  // Running: the time so far counts.
  EXPECT_EQ(Only(r, kT0 + absl::Seconds(14)).busy_seconds, 4);
  r.SetCurrentJob("w", "", kT0 + absl::Seconds(15));
  // Idle: stays at the job's 5 s.
  EXPECT_EQ(Only(r, kT0 + absl::Seconds(15)).busy_seconds, 5);
  EXPECT_EQ(Only(r, kT0 + absl::Seconds(100)).busy_seconds, 5);
  r.SetCurrentJob("w", "j2", kT0 + absl::Seconds(100));
  r.SetCurrentJob("w", "", kT0 + absl::Milliseconds(102500));
  EXPECT_EQ(Only(r, kT0 + absl::Seconds(200)).busy_seconds, 7.5);
  // Ending again while idle adds nothing.
  r.SetCurrentJob("w", "", kT0 + absl::Seconds(300));
  EXPECT_EQ(Only(r, kT0 + absl::Seconds(300)).busy_seconds, 7.5);
  EXPECT_EQ(Only(r, kT0 + absl::Seconds(300)).gpu.jobs_done(), 2);
}

TEST(WorkerBusyTest, SwitchingStraightToAnotherJobKeepsCounting) {
  WorkerRegistry r(Liveness(absl::Hours(1)));
  r.Touch(Info("w"), kT0);
  r.SetCurrentJob("w", "j1", kT0);
  r.SetCurrentJob("w", "j2", kT0 + absl::Seconds(3));
  WorkerRegistry::WorkerStats s = Only(r, kT0 + absl::Seconds(5));
  EXPECT_EQ(s.busy_seconds, 5);
  EXPECT_EQ(s.gpu.current_job_id(), "j2");
  r.SetCurrentJob("w", "", kT0 + absl::Seconds(6));
  EXPECT_EQ(Only(r, kT0 + absl::Seconds(9)).busy_seconds, 6);
}

TEST(WorkerBusyTest, ClockGoingBackwardsAddsNoNegativeTime) {
  WorkerRegistry r(Liveness(absl::Hours(1)));
  r.Touch(Info("w"), kT0);
  r.SetCurrentJob("w", "j1", kT0 + absl::Seconds(10));
  EXPECT_EQ(Only(r, kT0).busy_seconds, 0);
  r.SetCurrentJob("w", "", kT0 + absl::Seconds(5));
  EXPECT_EQ(Only(r, kT0 + absl::Seconds(20)).busy_seconds, 0);
}

TEST(WorkerBusyTest, JobsPerMinuteCountsTheLastTenMinutes) {
  WorkerRegistry r(Liveness(absl::Hours(1)));
  r.Touch(Info("w"), kT0);
  // Jobs ending at 1, 2, 3 and 9 minutes.
  for (int minute : {1, 2, 3, 9}) {
    const absl::Time end = kT0 + absl::Minutes(minute);
    r.SetCurrentJob("w", "j", end - absl::Seconds(1));
    r.SetCurrentJob("w", "", end);
  }
  EXPECT_EQ(Only(r, kT0 + absl::Minutes(9)).jobs_per_minute, 0.4);
  // At 11:30 the job that ended at minute 1 is out of the window.
  EXPECT_EQ(Only(r, kT0 + absl::Seconds(690)).jobs_per_minute, 0.3);
  // Exactly ten minutes after the end at minute 2: out.
  EXPECT_EQ(Only(r, kT0 + absl::Minutes(12)).jobs_per_minute, 0.2);
  EXPECT_EQ(Only(r, kT0 + absl::Minutes(19)).jobs_per_minute, 0);
  // A new job after old ones were dropped.
  r.SetCurrentJob("w", "k", kT0 + absl::Minutes(30));
  r.SetCurrentJob("w", "", kT0 + absl::Minutes(31));
  WorkerRegistry::WorkerStats s = Only(r, kT0 + absl::Minutes(31));
  EXPECT_EQ(s.jobs_per_minute, 0.1);
  EXPECT_EQ(s.gpu.jobs_done(), 5);
  // Starting a job is not ending one.
  r.SetCurrentJob("w", "m", kT0 + absl::Minutes(32));
  EXPECT_EQ(Only(r, kT0 + absl::Minutes(32)).jobs_per_minute, 0.1);
}

TEST(WorkerBusyTest, LiveStatsSkipsGoneWorkersAndAllStatsKeepsThem) {
  WorkerRegistry r(Liveness(absl::Seconds(45)));
  r.Touch(Info("b"), kT0);
  r.Touch(Info("a"), kT0 - absl::Minutes(5));
  r.SetCurrentJob("a", "ja", kT0 - absl::Minutes(5));
  r.SetCurrentJob("a", "", kT0 - absl::Minutes(4));

  std::vector<WorkerRegistry::WorkerStats> live = r.LiveStats(kT0);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].gpu.worker_id(), "b");

  std::vector<WorkerRegistry::WorkerStats> all = r.AllStats(kT0);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].gpu.worker_id(), "a");
  EXPECT_EQ(all[0].busy_seconds, 60);
  EXPECT_EQ(all[0].jobs_per_minute, 0.1);
  EXPECT_EQ(all[1].gpu.worker_id(), "b");
  EXPECT_EQ(all[1].busy_seconds, 0);
}

TEST(WorkerBusyTest, UnknownWorkerIsIgnored) {
  WorkerRegistry r(Liveness(absl::Seconds(45)));
  r.SetCurrentJob("ghost", "j", kT0);
  r.SetCurrentJob("ghost", "", kT0 + absl::Seconds(1));
  EXPECT_TRUE(r.AllStats(kT0).empty());
}

}  // namespace
}  // namespace kbench
