// JobTable's reservations: the room a job, or a sweep's batch of jobs, holds
// from JobService::Reserve until each job is inserted, so that a batch gets
// in whole or not at all and concurrent submits cannot pass the limit.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "server/core/job_table.h"
#include "server/store/store.h"

namespace kbench {
namespace {

v1::Job NewJob(const std::string& id) {
  v1::Job job;
  job.set_id(id);
  job.set_kind(v1::JOB_KIND_CORRECTNESS);
  job.set_stage(v1::STAGE_QUEUED);
  job.set_created_unix_ms(1000);
  job.set_updated_unix_ms(1000);
  return job;
}

// Room is held from Reserve to Insert, so that a batch gets all its jobs
// in or none, whatever else is submitted meanwhile.
TEST(JobTableReservationTest, ReservedRoomCountsUntilUsedOrGivenBack) {
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open({":memory:"});
  ASSERT_TRUE(store.ok()) << store.status();
  JobTable table(JobTable::Options{}, store->get());
  ASSERT_TRUE(table.Insert(NewJob("a"), v1::KernelRequest()).ok());
  EXPECT_EQ(table.UnfinishedCount(), 1);
  {
    absl::StatusOr<JobTable::Reservation> room = table.Reserve(2, 3);
    ASSERT_TRUE(room.ok()) << room.status();
    EXPECT_EQ(table.reserved(), 2);
    // No room for another while two are held.
    absl::StatusOr<JobTable::Reservation> more = table.Reserve(1, 3);
    EXPECT_EQ(more.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_EQ(more.status().message(), "3 unfinished jobs");
    // Insert uses a slot; a failed insert keeps it.
    ASSERT_TRUE(table.Insert(NewJob("b"), v1::KernelRequest(), &*room).ok());
    EXPECT_EQ(room->left(), 1);
    EXPECT_EQ(table.reserved(), 1);
    EXPECT_EQ(table.Insert(NewJob("b"), v1::KernelRequest(), &*room).code(),
              absl::StatusCode::kAlreadyExists);
    EXPECT_EQ(room->left(), 1);
    // Moved, it is still one reservation.
    JobTable::Reservation moved = *std::move(room);
    EXPECT_EQ(moved.left(), 1);
    EXPECT_EQ(table.reserved(), 1);
    ASSERT_TRUE(table.Insert(NewJob("c"), v1::KernelRequest(), &moved).ok());
    EXPECT_EQ(table.Insert(NewJob("d"), v1::KernelRequest(), &moved).code(),
              absl::StatusCode::kFailedPrecondition);
  }
  EXPECT_EQ(table.reserved(), 0);
  EXPECT_EQ(table.UnfinishedCount(), 3);
  // An unused reservation gives its room back when it ends.
  { ASSERT_TRUE(table.Reserve(1, 4).ok()); }
  EXPECT_EQ(table.reserved(), 0);
  ASSERT_TRUE(
      table.Update("a", [](v1::Job* j) { j->set_stage(v1::STAGE_DONE); }).ok());
  EXPECT_EQ(table.UnfinishedCount(), 2);
  EXPECT_TRUE(table.Reserve(2, 4).ok());
}

}  // namespace
}  // namespace kbench
