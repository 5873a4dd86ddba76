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

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * kKiB;
constexpr int64_t kGiB = 1024 * kMiB;
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// `value` within [lo, hi]; with `unknown_ok`, 0 (not reported) too.
absl::Status InRange(absl::string_view field, int64_t value, int64_t lo,
                     int64_t hi, bool unknown_ok = true) {
  if ((unknown_ok && value == 0) || (value >= lo && value <= hi)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("worker.spec.", field, " is ", value, "; a GPU has ", lo,
                   " to ", hi, unknown_ok ? " (or 0 when unknown)" : "",
                   ". Report the facts the driver gives (kbrunner does)"));
}

absl::Status FiniteIn(absl::string_view field, double value, double hi) {
  if (std::isfinite(value) && value >= 0 && value <= hi) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("worker.spec.", field, " is ",
                                                 value,
                                                 "; it must be a finite number "
                                                 "from 0 to ",
                                                 hi));
}

absl::Status Dims(absl::string_view field,
                  const google::protobuf::RepeatedField<int64_t>& dims,
                  const int64_t (&lo)[3], int64_t hi) {
  if (dims.empty()) return absl::OkStatus();
  if (dims.size() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("worker.spec.", field, " has ", dims.size(),
                     " values; it must have 3 (x, y, z) or none"));
  }
  for (int i = 0; i < 3; ++i) {
    RETURN_IF_ERROR(InRange(absl::StrCat(field, "[", i, "]"), dims[i], lo[i],
                            hi, /*unknown_ok=*/false));
  }
  return absl::OkStatus();
}

absl::Status ValidateSpec(const v1::GpuSpec& s) {
  if (s.name().empty()) {
    return absl::InvalidArgumentError(
        "worker.spec.name is empty; report the GPU's name");
  }
  RETURN_IF_ERROR(ValidateText(s.name(), 256, "worker.spec.name"));
  RETURN_IF_ERROR(ValidateText(s.uuid(), 128, "worker.spec.uuid"));
  RETURN_IF_ERROR(
      ValidateText(s.driver_version(), 64, "worker.spec.driver_version"));
  RETURN_IF_ERROR(
      ValidateText(s.runtime_version(), 64, "worker.spec.runtime_version"));
  RETURN_IF_ERROR(
      ValidateText(s.nvrtc_version(), 64, "worker.spec.nvrtc_version"));
  RETURN_IF_ERROR(
      ValidateText(s.datasheet_name(), 128, "worker.spec.datasheet_name"));
  if (!IsGpuArch(s.arch())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker.spec.arch '", absl::CHexEscape(s.arch().substr(0, 32)),
        "' is not a GPU architecture like sm_90"));
  }
  RETURN_IF_ERROR(InRange("cc_major", s.cc_major(), 1, 99));
  RETURN_IF_ERROR(InRange("cc_minor", s.cc_minor(), 0, 9));
  if (s.cc_major() > 0) {
    // "sm_90a" -> 90; IsGpuArch has checked the form.
    absl::string_view num = absl::string_view(s.arch()).substr(3);
    if (num.back() == 'a' || num.back() == 'f') num.remove_suffix(1);
    int digits = 0;
    if (!absl::SimpleAtoi(num, &digits) ||
        digits != s.cc_major() * 10 + s.cc_minor()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "worker.spec.arch ", s.arch(), " does not match compute capability ",
          s.cc_major(), ".", s.cc_minor()));
    }
  }
  RETURN_IF_ERROR(InRange("sm_count", s.sm_count(), 1, 1024, false));
  RETURN_IF_ERROR(InRange("max_threads_per_block", s.max_threads_per_block(),
                          64, 4096, false));
  RETURN_IF_ERROR(InRange("sm_clock_mhz", s.sm_clock_mhz(), 100, 10000));
  RETURN_IF_ERROR(
      InRange("memory_clock_mhz", s.memory_clock_mhz(), 100, 100000));
  RETURN_IF_ERROR(InRange("memory_bus_bits", s.memory_bus_bits(), 32, 16384));
  RETURN_IF_ERROR(
      InRange("memory_bytes", s.memory_bytes(), 256 * kMiB, 64 * 1024 * kGiB));
  RETURN_IF_ERROR(InRange("l2_bytes", s.l2_bytes(), 64 * kKiB, 4 * kGiB));
  RETURN_IF_ERROR(InRange("regs_per_sm", s.regs_per_sm(), 8192, 1 << 22));
  RETURN_IF_ERROR(InRange("regs_per_block", s.regs_per_block(), 8192, 1 << 22));
  RETURN_IF_ERROR(InRange("smem_per_sm_bytes", s.smem_per_sm_bytes(), 16 * kKiB,
                          64 * kMiB));
  RETURN_IF_ERROR(InRange("smem_per_block_bytes", s.smem_per_block_bytes(),
                          16 * kKiB, 16 * kMiB));
  RETURN_IF_ERROR(
      InRange("smem_per_block_optin_bytes", s.smem_per_block_optin_bytes(),
              std::max(16 * kKiB, s.smem_per_block_bytes()), 16 * kMiB));
  RETURN_IF_ERROR(InRange("reserved_smem_per_block_bytes",
                          s.reserved_smem_per_block_bytes(), 0, 64 * kKiB));
  RETURN_IF_ERROR(
      InRange("max_threads_per_sm", s.max_threads_per_sm(), 64, 65536));
  RETURN_IF_ERROR(InRange("max_blocks_per_sm", s.max_blocks_per_sm(), 1, 1024));
  RETURN_IF_ERROR(InRange("warp_size", s.warp_size(), 32, 32));
  RETURN_IF_ERROR(InRange("pci_bus_id", s.pci_bus_id(), 0, 65535));
  RETURN_IF_ERROR(
      Dims("max_block_dims", s.max_block_dims(), {64, 64, 1}, 4096));
  RETURN_IF_ERROR(
      Dims("max_grid_dims", s.max_grid_dims(), {65535, 1024, 1024}, kInt32Max));
  RETURN_IF_ERROR(
      FiniteIn("theoretical_memory_gbps", s.theoretical_memory_gbps(), 1e6));
  RETURN_IF_ERROR(FiniteIn("measured_copy_gbps", s.measured_copy_gbps(), 1e6));
  RETURN_IF_ERROR(
      FiniteIn("measured_fp32_tflops", s.measured_fp32_tflops(), 1e5));
  RETURN_IF_ERROR(
      FiniteIn("datasheet_memory_gbps", s.datasheet_memory_gbps(), 1e6));
  RETURN_IF_ERROR(
      FiniteIn("datasheet_fp32_tflops", s.datasheet_fp32_tflops(), 1e5));
  RETURN_IF_ERROR(
      FiniteIn("datasheet_bf16_tflops", s.datasheet_bf16_tflops(), 1e6));
  RETURN_IF_ERROR(FiniteIn("measured_launch_us", s.measured_launch_us(), 1e6));
  return absl::OkStatus();
}

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

bool IsGpuArch(absl::string_view arch) {
  if (!absl::ConsumePrefix(&arch, "sm_")) return false;
  if (!arch.empty() && (arch.back() == 'a' || arch.back() == 'f')) {
    arch.remove_suffix(1);
  }
  if (arch.size() < 2 || arch.size() > 3 || arch.front() == '0') return false;
  for (char c : arch) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

namespace {

// What a worker says of its links to the host's other GPUs.
absl::Status ValidateLinks(const v1::WorkerInfo& info) {
  // More than any one host has; each link is shown and stored.
  constexpr int kMaxLinks = 64;
  // Above any link's bandwidth (NVLink 5 is 1.8 TB/s a GPU).
  constexpr double kMaxLinkGbps = 100000;
  if (info.links_size() > kMaxLinks) {
    return absl::InvalidArgumentError(
        absl::StrCat("worker.links has ", info.links_size(),
                     " entries; at most ", kMaxLinks, " (one per other GPU)"));
  }
  std::set<int> peers;
  for (int i = 0; i < info.links_size(); ++i) {
    const v1::GpuLink& l = info.links(i);
    const std::string field = absl::StrCat("worker.links[", i, "]");
    if (l.peer_gpu_index() < 0 || l.peer_gpu_index() > 1023 ||
        l.peer_gpu_index() == info.gpu_index() ||
        !peers.insert(l.peer_gpu_index()).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".peer_gpu_index is ", l.peer_gpu_index(),
          "; it must be another GPU of the host (0 to 1023, not this one's ",
          info.gpu_index(), "), once"));
    }
    if (l.performance_rank() < 0 || l.performance_rank() > 1000 ||
        !std::isfinite(l.copy_gbps()) || l.copy_gbps() < 0 ||
        l.copy_gbps() > kMaxLinkGbps) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " has performance_rank ", l.performance_rank(),
                       " and copy_gbps ", l.copy_gbps(),
                       "; they must be 0 to 1000 and 0 to ", kMaxLinkGbps));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateWorkerInfo(const v1::WorkerInfo& info) {
  RETURN_IF_ERROR(ValidateJobId(info.worker_id(), "worker.worker_id", ""));
  if (!info.instance_id().empty()) {
    RETURN_IF_ERROR(
        ValidateJobId(info.instance_id(), "worker.instance_id", ""));
  }
  RETURN_IF_ERROR(ValidateText(info.hostname(), 255, "worker.hostname"));
  // Empty is allowed: a host without a machine id.
  RETURN_IF_ERROR(ValidateSessionId(info.host_id(), "worker.host_id", ""));
  RETURN_IF_ERROR(ValidateText(info.version(), 128, "worker.version"));
  // RunnerJob's fields and what a result means change between versions, and
  // the same request will never pass: the worker stops on InvalidArgument.
  if (info.version() != KBENCH_VERSION) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker.version is '", info.version(), "' but this kbd is ",
        KBENCH_VERSION,
        "; the worker protocol changes between versions, so run the kbworker "
        "(and kbrunner) of the same kbench build as kbd"));
  }
  if (info.gpu_index() < 0 || info.gpu_index() > 1023) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker.gpu_index is ", info.gpu_index(), "; it must be 0 to 1023"));
  }
  RETURN_IF_ERROR(ValidateLinks(info));
  if (!info.has_spec()) {
    return absl::InvalidArgumentError(
        "worker.spec is missing; a worker reports its GPU's facts (kbrunner's "
        "hello) with every lease request");
  }
  return ValidateSpec(info.spec());
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
