#include "server/worker_registry.h"

#include <algorithm>

namespace kbench {

void WorkerRegistry::Touch(const v1::WorkerInfo& info, absl::Time now) {
  absl::MutexLock lock(&mu_);
  Entry& e = workers_[info.worker_id()];
  e.gpu.set_worker_id(info.worker_id());
  e.gpu.set_hostname(info.hostname());
  e.gpu.set_gpu_index(info.gpu_index());
  *e.gpu.mutable_spec() = info.spec();
  e.gpu.set_last_seen_unix_ms(absl::ToUnixMillis(now));
  e.last_seen = now;
}

void WorkerRegistry::TouchId(const std::string& worker_id, absl::Time now) {
  absl::MutexLock lock(&mu_);
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) return;
  it->second.last_seen = now;
  it->second.gpu.set_last_seen_unix_ms(absl::ToUnixMillis(now));
}

void WorkerRegistry::SetCurrentJob(const std::string& worker_id,
                                   const std::string& job_id, absl::Time now) {
  absl::MutexLock lock(&mu_);
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) return;
  Entry& e = it->second;
  v1::WorkerGpu& g = e.gpu;
  if (g.busy()) {
    e.busy_total += std::max(absl::ZeroDuration(), now - e.busy_since);
    if (job_id.empty()) {
      g.set_jobs_done(g.jobs_done() + 1);
      e.ended.push_back(now);
    }
  }
  while (!e.ended.empty() && e.ended.front() <= now - kJobRateWindow) {
    e.ended.pop_front();
  }
  if (!job_id.empty()) e.busy_since = now;
  g.set_busy(!job_id.empty());
  g.set_current_job_id(job_id);
}

WorkerRegistry::WorkerStats WorkerRegistry::StatsOf(const Entry& e,
                                                    absl::Time now) {
  WorkerStats s;
  s.gpu = e.gpu;
  absl::Duration busy = e.busy_total;
  if (e.gpu.busy()) busy += std::max(absl::ZeroDuration(), now - e.busy_since);
  s.busy_seconds = absl::ToDoubleSeconds(busy);
  const int64_t recent = std::count_if(
      e.ended.begin(), e.ended.end(),
      [&](absl::Time t) { return t > now - kJobRateWindow && t <= now; });
  s.jobs_per_minute =
      static_cast<double>(recent) / absl::ToDoubleMinutes(kJobRateWindow);
  return s;
}

std::vector<WorkerRegistry::WorkerStats> WorkerRegistry::LiveStats(
    absl::Time now) const {
  absl::MutexLock lock(&mu_);
  std::vector<WorkerStats> out;
  for (const auto& [id, e] : workers_) {
    if (now - e.last_seen <= options_.liveness) out.push_back(StatsOf(e, now));
  }
  return out;
}

std::vector<WorkerRegistry::WorkerStats> WorkerRegistry::AllStats(
    absl::Time now) const {
  absl::MutexLock lock(&mu_);
  std::vector<WorkerStats> out;
  for (const auto& [id, e] : workers_) out.push_back(StatsOf(e, now));
  return out;
}

std::vector<v1::WorkerGpu> WorkerRegistry::Live(absl::Time now) const {
  absl::MutexLock lock(&mu_);
  std::vector<v1::WorkerGpu> out;
  for (const auto& [id, e] : workers_) {
    if (now - e.last_seen <= options_.liveness) out.push_back(e.gpu);
  }
  return out;
}

bool WorkerRegistry::AnyLive(absl::Time now) const {
  return !Live(now).empty();
}

std::optional<v1::GpuSpec> WorkerRegistry::AnySpec(absl::Time now) const {
  std::vector<v1::WorkerGpu> live = Live(now);
  if (live.empty()) return std::nullopt;
  return live.front().spec();
}

absl::Time WorkerRegistry::LastSeen() const {
  absl::MutexLock lock(&mu_);
  absl::Time last = absl::InfinitePast();
  for (const auto& [id, e] : workers_) last = std::max(last, e.last_seen);
  return last;
}

}  // namespace kbench
