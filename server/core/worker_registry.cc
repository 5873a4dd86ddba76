#include "server/core/worker_registry.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "base/untrusted_input.h"
#include "google/protobuf/util/message_differencer.h"

namespace kbench {
namespace {
// The fields of `gpu` that a worker reports of itself, from `info`: the one
// place that copies them, for the registry's record and for the identity a
// registration offers.
void SetFromInfo(const v1::WorkerInfo& info, v1::WorkerGpu* gpu) {
  gpu->set_worker_id(info.worker_id());
  gpu->set_hostname(info.hostname());
  gpu->set_host_id(info.host_id());
  gpu->set_gpu_index(info.gpu_index());
  *gpu->mutable_spec() = info.spec();
  *gpu->mutable_links() = info.links();
}

// The facts a worker id is bound to: everything but the ceilings measured
// when its runner starts.
v1::WorkerGpu Identity(const v1::WorkerGpu& g) {
  v1::WorkerGpu id;
  id.set_worker_id(g.worker_id());
  id.set_hostname(g.hostname());
  id.set_host_id(g.host_id());
  id.set_gpu_index(g.gpu_index());
  *id.mutable_spec() = g.spec();
  id.mutable_spec()->clear_measured_copy_gbps();
  id.mutable_spec()->clear_measured_fp32_tflops();
  id.mutable_spec()->clear_measured_launch_us();
  return id;
}

// The smaller of two limits where 0 means "not reported".
template <typename T>
T MinKnown(T a, T b) {
  if (a <= 0) return b;
  if (b <= 0) return a;
  return std::min(a, b);
}

void MinDims(const google::protobuf::RepeatedField<int64_t>& from,
             google::protobuf::RepeatedField<int64_t>* into) {
  if (into->empty()) {
    *into = from;
    return;
  }
  for (int i = 0; i < into->size() && i < from.size(); ++i) {
    into->Set(i, MinKnown(into->Get(i), from.Get(i)));
  }
}

}  // namespace

std::string DescribeArchs(const std::map<std::string, int>& archs) {
  if (archs.empty()) return "none";
  std::vector<std::string> parts;
  parts.reserve(archs.size());
  for (const auto& [arch, n] : archs) {
    parts.push_back(
        absl::StrCat(arch, " (", n, n == 1 ? " worker)" : " workers)"));
  }
  return absl::StrJoin(parts, ", ");
}

absl::Status WorkerRegistry::Register(const v1::WorkerInfo& info,
                                      absl::Time now) {
  RETURN_IF_ERROR(ValidateWorkerInfo(info));
  v1::WorkerInfo clean = info;
  clean.DiscardUnknownFields();
  absl::MutexLock lock(&mu_);
  auto it = workers_.find(clean.worker_id());
  // A replaced instance stands by while the one that replaced it is
  // connected (refused, it waits and asks again), and takes the id back
  // once that one is gone; it is not told to exit, so that a supervisor
  // restarting it cannot make two processes swap the id for ever.
  if (it != workers_.end() && !clean.instance_id().empty() &&
      now - it->second.last_seen <= options_.liveness &&
      absl::c_linear_search(it->second.superseded, clean.instance_id())) {
    return absl::AlreadyExistsError(absl::StrCat(
        "worker id '", clean.worker_id(),
        "' was taken over by a newer kbworker process (instance ",
        it->second.instance, "; this one is ", clean.instance_id(),
        "). Two kbworkers share this id: give each its own --gpu or "
        "--worker-id. This one stands by until the other has been gone "
        "for ",
        absl::FormatDuration(options_.liveness)));
  }
  if (it != workers_.end() && now - it->second.last_seen <= options_.liveness) {
    v1::WorkerGpu offered;
    SetFromInfo(clean, &offered);
    google::protobuf::util::MessageDifferencer diff;
    std::string report;
    diff.ReportDifferencesToString(&report);
    if (!diff.Compare(Identity(it->second.gpu), Identity(offered))) {
      if (report.size() > 600) report = report.substr(0, 600) + "...";
      return absl::FailedPreconditionError(absl::StrCat(
          "worker id '", clean.worker_id(),
          "' is connected with another GPU or host (seen ",
          absl::FormatDuration(
              absl::Trunc(now - it->second.last_seen, absl::Milliseconds(1))),
          " ago); a connected worker id keeps the GPU it registered with. "
          "Give this worker its own --worker-id, or wait ",
          absl::FormatDuration(options_.liveness),
          " for the old registration to expire. Differences: ", report));
    }
  }
  RecordLocked(clean, now);
  return absl::OkStatus();
}

void WorkerRegistry::Touch(const v1::WorkerInfo& info, absl::Time now) {
  absl::MutexLock lock(&mu_);
  RecordLocked(info, now);
}

void WorkerRegistry::RecordLocked(const v1::WorkerInfo& info, absl::Time now) {
  Entry& e = workers_[info.worker_id()];
  if (!info.instance_id().empty() && info.instance_id() != e.instance) {
    if (!e.instance.empty()) {
      e.superseded.push_back(e.instance);
      if (e.superseded.size() > kMaxSuperseded) e.superseded.pop_front();
    }
    e.instance = info.instance_id();
  }
  SetFromInfo(info, &e.gpu);
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

std::optional<v1::GpuSpec> WorkerRegistry::SpecOf(
    const std::string& worker_id) const {
  absl::MutexLock lock(&mu_);
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) return std::nullopt;
  return it->second.gpu.spec();
}

std::map<std::string, int> WorkerRegistry::LiveArchs(absl::Time now) const {
  std::map<std::string, int> archs;
  for (const v1::WorkerGpu& g : Live(now)) ++archs[g.spec().arch()];
  return archs;
}

std::map<std::string, std::map<int, std::set<int>>>
WorkerRegistry::LiveHostGpus(const std::string& arch, absl::Time now) const {
  std::map<std::string, std::map<int, std::set<int>>> hosts;
  for (const v1::WorkerGpu& g : Live(now)) {
    if (g.spec().arch() != arch || g.host_id().empty()) continue;
    auto [it, added] = hosts[g.host_id()].try_emplace(g.gpu_index());
    if (!added) continue;
    for (const v1::GpuLink& l : g.links()) {
      if (l.peer_access()) it->second.insert(l.peer_gpu_index());
    }
  }
  return hosts;
}

std::optional<v1::GpuSpec> WorkerRegistry::StrictestSpec(
    const std::string& arch, absl::Time now) const {
  std::optional<v1::GpuSpec> out;
  std::set<std::string> names;
  int count = 0;
  for (const v1::WorkerGpu& g : Live(now)) {
    const v1::GpuSpec& s = g.spec();
    if (s.arch() != arch) continue;
    ++count;
    names.insert(s.name());
    if (!out) {
      out = s;
      continue;
    }
    out->set_sm_count(MinKnown(out->sm_count(), s.sm_count()));
    out->set_regs_per_sm(MinKnown(out->regs_per_sm(), s.regs_per_sm()));
    out->set_regs_per_block(
        MinKnown(out->regs_per_block(), s.regs_per_block()));
    out->set_smem_per_sm_bytes(
        MinKnown(out->smem_per_sm_bytes(), s.smem_per_sm_bytes()));
    out->set_smem_per_block_bytes(
        MinKnown(out->smem_per_block_bytes(), s.smem_per_block_bytes()));
    out->set_smem_per_block_optin_bytes(MinKnown(
        out->smem_per_block_optin_bytes(), s.smem_per_block_optin_bytes()));
    out->set_reserved_smem_per_block_bytes(
        std::max(out->reserved_smem_per_block_bytes(),
                 s.reserved_smem_per_block_bytes()));
    out->set_max_threads_per_block(
        MinKnown(out->max_threads_per_block(), s.max_threads_per_block()));
    out->set_max_threads_per_sm(
        MinKnown(out->max_threads_per_sm(), s.max_threads_per_sm()));
    out->set_max_blocks_per_sm(
        MinKnown(out->max_blocks_per_sm(), s.max_blocks_per_sm()));
    MinDims(s.max_block_dims(), out->mutable_max_block_dims());
    MinDims(s.max_grid_dims(), out->mutable_max_grid_dims());
  }
  if (out && names.size() > 1) {
    // Named in limit messages ("this GPU (...) allows ...").
    out->set_name(absl::StrCat("the strictest of ", count, " connected ", arch,
                               " GPUs: ", absl::StrJoin(names, ", ")));
  }
  return out;
}

absl::StatusOr<std::string> WorkerRegistry::ChooseArch(
    const std::string& requested, bool needs_gpu, const std::string& fallback,
    absl::Time now) const {
  const std::map<std::string, int> archs = LiveArchs(now);
  if (archs.empty()) return requested.empty() ? fallback : requested;
  if (!requested.empty()) {
    if (archs.count(requested) > 0 || !needs_gpu) return requested;
    return absl::FailedPreconditionError(absl::StrCat(
        "no connected GPU worker is ", requested,
        "; connected: ", DescribeArchs(archs),
        ". Leave arch empty to compile for a connected GPU, or connect a "
        "kbworker on a ",
        requested, " GPU"));
  }
  std::string best;
  int most = 0;
  for (const auto& [arch, n] : archs) {
    if (n > most) {
      best = arch;
      most = n;
    }
  }
  return best;
}

absl::Time WorkerRegistry::LastSeen() const {
  absl::MutexLock lock(&mu_);
  absl::Time last = absl::InfinitePast();
  for (const auto& [id, e] : workers_) last = std::max(last, e.last_seen);
  return last;
}

absl::Time WorkerRegistry::LastSeenWithArch(const std::string& arch) const {
  absl::MutexLock lock(&mu_);
  absl::Time last = absl::InfinitePast();
  for (const auto& [id, e] : workers_) {
    if (e.gpu.spec().arch() == arch) last = std::max(last, e.last_seen);
  }
  return last;
}

}  // namespace kbench
