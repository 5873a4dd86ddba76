// HttpTaskQueue (server/http/http_task_queue.h): the pool grows to its bound,
// queues beyond it and shrinks when idle; shutdown runs what is queued.
#include "server/http/http_task_queue.h"

#include <gtest/gtest.h>

#include <atomic>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace kbench {
namespace {

TEST(HttpTaskQueueTest, GrowsToItsBoundQueuesBeyondAndShrinksWhenIdle) {
  HttpTaskQueue::Options o;
  o.max_threads = 8;
  o.min_threads = 1;
  o.idle_exit = absl::Milliseconds(100);
  HttpTaskQueue q(o);
  absl::Notification go;
  std::atomic<int> ran{0};
  for (int i = 0; i < 20; ++i) {
    q.enqueue([&] {
      go.WaitForNotification();
      ran.fetch_add(1);
    });
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (q.stats().busy < 8 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  HttpTaskQueue::Stats s = q.stats();
  EXPECT_EQ(s.threads, 8);
  EXPECT_EQ(s.busy, 8);
  EXPECT_EQ(s.queued, 12);
  go.Notify();
  while (ran.load() < 20 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_EQ(ran.load(), 20);
  // Idle threads exit, down to min_threads.
  while (q.stats().threads > 1 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  s = q.stats();
  EXPECT_EQ(s.threads, 1);
  EXPECT_EQ(s.peak_threads, 8);
  // The spare is reused, and the pool grows again on demand.
  q.enqueue([&] { ran.fetch_add(1); });
  while (ran.load() < 21 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_EQ(ran.load(), 21);
  EXPECT_EQ(q.stats().threads, 1);
}

TEST(HttpTaskQueueTest, ShutdownRunsWhatIsQueued) {
  HttpTaskQueue::Options o;
  o.max_threads = 1;
  std::atomic<int> ran{0};
  {
    HttpTaskQueue q(o);
    for (int i = 0; i < 5; ++i) {
      q.enqueue([&] {
        absl::SleepFor(absl::Milliseconds(10));
        ran.fetch_add(1);
      });
    }
    q.shutdown();
    EXPECT_EQ(ran.load(), 5);
    EXPECT_EQ(q.stats().threads, 0);
    q.shutdown();  // Idempotent, and again in the destructor.
  }
  EXPECT_EQ(ran.load(), 5);
}

}  // namespace
}  // namespace kbench
