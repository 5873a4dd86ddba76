#include "server/core/job_table.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace kbench {

absl::Status JobTable::Insert(const v1::Job& job,
                              const v1::KernelRequest& request) {
  absl::MutexLock lock(&mu_);
  if (jobs_.count(job.id())) {
    return absl::AlreadyExistsError(
        absl::StrCat("job '", job.id(), "' exists"));
  }
  if (absl::Status s = store_->InsertJob(job, request); !s.ok()) return s;
  Entry& e = jobs_[job.id()];
  e.job = job;
  e.last_write = absl::Now();
  return absl::OkStatus();
}

void JobTable::Adopt(const v1::Job& job) {
  absl::MutexLock lock(&mu_);
  jobs_[job.id()].job = job;
}

absl::StatusOr<v1::Job> JobTable::Update(
    const std::string& id, const std::function<void(v1::Job*)>& mutate) {
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
  const absl::Time now = absl::Now();
  e.job.set_updated_unix_ms(absl::ToUnixMillis(now));
  const bool done = e.job.stage() == v1::STAGE_DONE;
  if (done && e.job.finished_unix_ms() == 0) {
    e.job.set_finished_unix_ms(e.job.updated_unix_ms());
  }
  if (e.job.stage() != before ||
      now - e.last_write >= options_.detail_write_interval) {
    if (absl::Status s = store_->UpdateJob(e.job); !s.ok()) {
      // The job lives on in memory; the next change retries the write.
      spdlog::error("persisting job {}: {}", id, std::string(s.message()));
    } else {
      e.last_write = now;
    }
  }
  for (auto& [token, watcher] : e.watchers) watcher(e.job);
  if (done) e.watchers.clear();
  return e.job;
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
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) {
    absl::StatusOr<v1::Job> stored = store_->GetJob(id);
    if (!stored.ok()) return stored.status();
    watcher(*stored);
    return 0;
  }
  watcher(it->second.job);
  if (it->second.job.stage() == v1::STAGE_DONE) return 0;
  const int64_t token = next_token_++;
  it->second.watchers[token] = std::move(watcher);
  return token;
}

void JobTable::Unwatch(const std::string& id, int64_t token) {
  if (token == 0) return;
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(id);
  if (it != jobs_.end()) it->second.watchers.erase(token);
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
