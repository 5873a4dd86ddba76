#include "server/core/job_table.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace kbench {

JobTable::Reservation& JobTable::Reservation::operator=(
    Reservation&& other) noexcept {
  if (this != &other) {
    Release();
    table_ = other.table_;
    left_ = other.left_;
    other.table_ = nullptr;
    other.left_ = 0;
  }
  return *this;
}

void JobTable::Reservation::Release() {
  if (table_ != nullptr && left_ > 0) {
    absl::MutexLock lock(&table_->mu_);
    table_->reserved_ -= left_;
  }
  left_ = 0;
}

absl::StatusOr<JobTable::Reservation> JobTable::Reserve(int n,
                                                        int max_unfinished) {
  absl::MutexLock lock(&mu_);
  const int unfinished = UnfinishedLocked();
  if (n < 0 ||
      static_cast<int64_t>(unfinished) + reserved_ + n > max_unfinished) {
    return absl::ResourceExhaustedError(
        absl::StrCat(unfinished + reserved_, " unfinished jobs"));
  }
  reserved_ += n;
  return Reservation(this, n);
}

absl::Status JobTable::Insert(const v1::Job& job,
                              const v1::KernelRequest& request,
                              Reservation* room) {
  absl::MutexLock lock(&mu_);
  if (room != nullptr && (room->table_ != this || room->left_ <= 0)) {
    return absl::FailedPreconditionError(
        absl::StrCat("job '", job.id(), "': no room reserved for it"));
  }
  if (jobs_.count(job.id())) {
    return absl::AlreadyExistsError(
        absl::StrCat("job '", job.id(), "' exists"));
  }
  if (absl::Status s = store_->InsertJob(job, request); !s.ok()) return s;
  Entry& e = jobs_[job.id()];
  e.job = job;
  e.last_write = absl::Now();
  if (room != nullptr) {
    --room->left_;
    --reserved_;
  }
  return absl::OkStatus();
}

void JobTable::Adopt(const v1::Job& job) {
  absl::MutexLock lock(&mu_);
  jobs_[job.id()].job = job;
}

absl::StatusOr<std::pair<v1::Job, std::shared_ptr<JobTable::Channel>>>
JobTable::Apply(const std::string& id,
                const std::function<void(v1::Job*)>& mutate,
                const TurnFn* turn_of) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) {
    return absl::NotFoundError(absl::StrCat("no live job '", id, "'"));
  }
  Entry& e = it->second;
  if (e.job.stage() == v1::STAGE_DONE) {
    return absl::FailedPreconditionError(
        absl::StrCat("job '", id, "' is already done"));
  }
  const v1::Stage before = e.job.stage();
  mutate(&e.job);
  if (turn_of != nullptr) e.job.set_stage(v1::STAGE_DONE);
  const absl::Time now = absl::Now();
  e.job.set_updated_unix_ms(absl::ToUnixMillis(now));
  if (e.job.stage() == v1::STAGE_DONE && e.job.finished_unix_ms() == 0) {
    e.job.set_finished_unix_ms(e.job.updated_unix_ms());
  }
  absl::Status written = absl::OkStatus();
  if (turn_of != nullptr) {
    const std::optional<Store::SessionTurn> turn = (*turn_of)(e.job);
    written = store_->FinishJob(e.job, turn ? &*turn : nullptr);
  } else if (e.job.stage() != before ||
             now - e.last_write >= options_.detail_write_interval) {
    written = store_->UpdateJob(e.job);
  } else {
    written = absl::CancelledError("not due");  // Nothing was written.
  }
  if (written.ok()) {
    e.last_write = now;
  } else if (!absl::IsCancelled(written)) {
    // The job lives on in memory; the next change retries the write.
    spdlog::error("persisting job {}: {}", id, std::string(written.message()));
  }
  ++e.version;
  e.channel->pending.push_back({e.job, e.version, 0});
  return std::make_pair(e.job, e.channel);
}

absl::StatusOr<v1::Job> JobTable::Update(
    const std::string& id, const std::function<void(v1::Job*)>& mutate) {
  auto applied = Apply(id, mutate, nullptr);
  if (!applied.ok()) return applied.status();
  Deliver(applied->second);
  return std::move(applied->first);
}

absl::StatusOr<v1::Job> JobTable::Finish(
    const std::string& id, const std::function<void(v1::Job*)>& mutate,
    const TurnFn& turn_of) {
  auto applied = Apply(id, mutate, &turn_of);
  if (!applied.ok()) return applied.status();
  Deliver(applied->second);
  return std::move(applied->first);
}

void JobTable::Deliver(const std::shared_ptr<Channel>& channel) {
  Channel& ch = *channel;
  mu_.Lock();
  if (ch.delivering) {  // That thread delivers what was just queued too.
    mu_.Unlock();
    return;
  }
  ch.delivering = true;
  while (!ch.pending.empty()) {
    Channel::Change change = std::move(ch.pending.front());
    ch.pending.pop_front();
    std::vector<Watcher> calls;
    if (change.only_token != 0) {
      auto it = ch.watchers.find(change.only_token);
      if (it != ch.watchers.end()) calls.push_back(it->second);
    } else {
      for (const auto& [token, watcher] : ch.watchers) {
        auto since = ch.since.find(token);
        if (since != ch.since.end() && change.version <= since->second) {
          continue;  // Its first call showed this change already.
        }
        calls.push_back(watcher);
      }
      if (change.job.stage() == v1::STAGE_DONE) {
        ch.watchers.clear();
        ch.since.clear();
      }
    }
    mu_.Unlock();
    for (const Watcher& watcher : calls) watcher(change.job);
    mu_.Lock();
  }
  ch.delivering = false;
  mu_.Unlock();
}

absl::StatusOr<v1::Job> JobTable::Get(const std::string& id) {
  {
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(id);
    if (it != jobs_.end()) return it->second.job;
  }
  return store_->GetJob(id);
}

absl::StatusOr<int64_t> JobTable::Watch(const std::string& id,
                                        Watcher watcher) {
  std::shared_ptr<Channel> channel;
  int64_t token = 0;
  {
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(id);
    if (it != jobs_.end() && it->second.job.stage() != v1::STAGE_DONE) {
      Entry& e = it->second;
      token = next_token_++;
      // Swapped, not moved: the finished-job path below still calls it
      // when the job is not live.
      e.channel->watchers[token].swap(watcher);
      e.channel->since[token] = e.version;
      // Through the channel, so that it comes before any later change.
      e.channel->pending.push_back({e.job, e.version, token});
      channel = e.channel;
    }
  }
  if (channel != nullptr) {
    Deliver(channel);
    return token;
  }
  // Finished (the DONE state is its last): one call, no subscription.
  absl::StatusOr<v1::Job> job = Get(id);
  if (!job.ok()) return job.status();
  watcher(*job);
  return 0;
}

void JobTable::Unwatch(const std::string& id, int64_t token) {
  if (token == 0) return;
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(id);
  if (it != jobs_.end()) {
    it->second.channel->watchers.erase(token);
    it->second.channel->since.erase(token);
  }
}

void JobTable::Evict(absl::Time now) {
  absl::MutexLock lock(&mu_);
  const int64_t cutoff = absl::ToUnixMillis(now - options_.done_retention);
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    const v1::Job& j = it->second.job;
    if (j.stage() == v1::STAGE_DONE && j.finished_unix_ms() < cutoff) {
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
}

int JobTable::UnfinishedLocked() const {
  int n = 0;
  for (const auto& [id, e] : jobs_) {
    if (e.job.stage() != v1::STAGE_DONE) ++n;
  }
  return n;
}

int JobTable::UnfinishedCount() const {
  absl::MutexLock lock(&mu_);
  return UnfinishedLocked();
}

int JobTable::reserved() const {
  absl::MutexLock lock(&mu_);
  return reserved_;
}

std::vector<v1::Job> JobTable::Unfinished() const {
  absl::MutexLock lock(&mu_);
  std::vector<v1::Job> out;
  for (const auto& [id, e] : jobs_) {
    if (e.job.stage() != v1::STAGE_DONE) out.push_back(e.job);
  }
  std::sort(out.begin(), out.end(), [](const v1::Job& a, const v1::Job& b) {
    return a.created_unix_ms() < b.created_unix_ms();
  });
  return out;
}

}  // namespace kbench
