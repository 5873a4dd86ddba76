#include "server/worker_registry.h"

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
                                   const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) return;
  v1::WorkerGpu& g = it->second.gpu;
  if (job_id.empty() && g.busy()) g.set_jobs_done(g.jobs_done() + 1);
  g.set_busy(!job_id.empty());
  g.set_current_job_id(job_id);
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
