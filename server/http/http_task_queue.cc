#include "server/http/http_task_queue.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace kbench {

HttpTaskQueue::HttpTaskQueue(const Options& options) : options_(options) {}

HttpTaskQueue::~HttpTaskQueue() { shutdown(); }

void HttpTaskQueue::ReapLocked(std::vector<std::thread>* out) {
  for (std::thread& t : finished_) out->push_back(std::move(t));
  finished_.clear();
}

void HttpTaskQueue::enqueue(std::function<void()> fn) {
  std::vector<std::thread> reaped;
  {
    absl::MutexLock lock(&mu_);
    queue_.push_back(std::move(fn));
    // Each idle thread takes one task; start one more when none is free.
    if (static_cast<int>(queue_.size()) > idle_ &&
        threads_ < options_.max_threads) {
      ++threads_;
      peak_ = std::max(peak_, threads_);
      live_.emplace_back();
      auto self = std::prev(live_.end());
      // Assigned under mu_, which the thread takes before it can move
      // itself to finished_.
      *self = std::thread([this, self] { Work(self); });
    }
    ReapLocked(&reaped);
  }
  for (std::thread& t : reaped) t.join();
}

void HttpTaskQueue::Work(std::list<std::thread>::iterator self) {
  absl::MutexLock lock(&mu_);
  const auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !queue_.empty() || shutdown_;
  };
  while (true) {
    ++idle_;
    const bool woken =
        mu_.AwaitWithTimeout(absl::Condition(&has_work), options_.idle_exit);
    --idle_;
    if (!queue_.empty()) {
      std::function<void()> task = std::move(queue_.front());
      queue_.pop_front();
      ++busy_;
      mu_.Unlock();
      task();
      task = nullptr;  // Destroyed outside the lock too.
      mu_.Lock();
      --busy_;
      continue;
    }
    if (shutdown_) break;
    if (!woken && threads_ > options_.min_threads) break;
  }
  --threads_;
  finished_.push_back(std::move(*self));
  live_.erase(self);
}

void HttpTaskQueue::shutdown() {
  std::vector<std::thread> reaped;
  {
    absl::MutexLock lock(&mu_);
    shutdown_ = true;
    // The remaining threads run what is queued, then exit.
    const auto done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return threads_ == 0;
    };
    mu_.Await(absl::Condition(&done));
    ReapLocked(&reaped);
  }
  for (std::thread& t : reaped) t.join();
}

HttpTaskQueue::Stats HttpTaskQueue::stats() const {
  absl::MutexLock lock(&mu_);
  Stats s;
  s.threads = threads_;
  s.busy = busy_;
  s.queued = static_cast<int>(queue_.size());
  s.peak_threads = peak_;
  return s;
}

}  // namespace kbench
