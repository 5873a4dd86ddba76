// Scheduler: what queued jobs wait for, and when a wait or a lease ends
// without a result (stage details, lost leases, jobs no worker can serve).
// The class is declared in server/core/scheduler.h.
#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/core/scheduler.h"
#include "server/core/scheduler_internal.h"

namespace kbench {
namespace {

using scheduler_internal::Failure;
using scheduler_internal::WorldSize;

// What the connected workers of one arch (per host, as
// WorkerRegistry::LiveHostGpus gives them) offer a gang of `world_size`.
struct GangCapacity {
  int most = 0;      // The most GPUs on one host.
  bool can = false;  // Some host has `world_size` that reach each other.
  std::string Most(int world_size) const {
    return most >= world_size
               ? absl::StrCat(most, ", but no ", world_size,
                              " of them all reach each other with peer "
                              "access (get_gpu_specs shows each GPU's links)")
               : absl::StrCat(most);
  }
};
GangCapacity Capacity(const std::map<std::string, HostGpus>& hosts,
                      int world_size) {
  GangCapacity c;
  for (const auto& [host, gpus] : hosts) {
    c.most = std::max(c.most, static_cast<int>(gpus.size()));
    c.can = c.can || FindGang(gpus, world_size).has_value();
  }
  return c;
}

}  // namespace

std::string Scheduler::GangWaitDetail(
    const Queued& q, const std::map<std::string, HostGpus>& hosts) {
  const std::string& arch = q.job.cubin_arch();
  const int world_size = WorldSize(q.job);
  const GangCapacity capacity = Capacity(hosts, world_size);
  if (capacity.can) {
    return absl::StrCat("waiting for ", world_size, " ", arch,
                        " GPUs of one host to be free together (a gang "
                        "lease; one-GPU jobs no longer start on the host "
                        "held for it)");
  }
  return absl::StrCat(
      "waiting for a host with ", world_size, " connected ", arch,
      " GPU workers whose GPUs all reach each other (the job spans ",
      world_size, " GPUs of one host; the most on one host now: ",
      capacity.Most(world_size),
      "); start one kbworker per GPU on such a host");
}

void Scheduler::UpdatePositionsLocked() {
  if (queue_.empty()) return;  // Every tick: no registry walk for nothing.
  int pos = 0;
  const absl::Time now = absl::Now();
  const std::map<std::string, int> archs = workers_->LiveArchs(now);
  // A gang's detail, by arch and world size: each searches every host.
  std::map<std::pair<std::string, int>, std::string> gangs;
  for (Queued& q : queue_) {
    ++pos;
    const std::string& arch = q.job.cubin_arch();
    std::string detail = "waiting for a free GPU";
    if (const int world_size = WorldSize(q.job); world_size > 1) {
      auto it = gangs.find({arch, world_size});
      if (it == gangs.end()) {
        it = gangs
                 .emplace(std::make_pair(arch, world_size),
                          GangWaitDetail(q, workers_->LiveHostGpus(arch, now)))
                 .first;
      }
      detail = it->second;
    } else if (archs.count(arch) == 0) {
      detail =
          absl::StrCat("waiting for a GPU worker to connect (the job needs ",
                       arch, "; connected: ", DescribeArchs(archs), ")");
    }
    // Called on every tick, so that a detail follows the workers that
    // come and go: only changes are written.
    if (q.shown_position == pos && q.shown_detail == detail) continue;
    q.shown_position = pos;
    q.shown_detail = detail;
    (void)jobs_->Update(q.job_id, [&](v1::Job* j) {
      j->set_stage(v1::STAGE_WAITING_GPU);
      j->set_queue_position(pos);
      j->set_stage_detail(detail);
    });
  }
}

std::string Scheduler::StaleMember(const Active& a, absl::Time now) const {
  auto stale = [&](const std::string& id, absl::Time last,
                   absl::string_view role) -> std::string {
    if (now - last <= options_.lease_ttl) return "";
    return absl::StrCat(
        id, role, " stopped heartbeating (no heartbeat for ",
        absl::FormatDuration(absl::Trunc(now - last, absl::Milliseconds(100))),
        ")");
  };
  std::string how = stale(a.worker_id, a.last_heartbeat, "");
  for (const Parked& p : a.parked) {
    if (!how.empty()) break;
    how = stale(p.worker_id, p.last_heartbeat, " (parked in the job's gang)");
  }
  return how;
}

void Scheduler::FailUnservableLocked(absl::Time now, Failed* failed) {
  const std::map<std::string, int> archs = workers_->LiveArchs(now);
  const std::string waited = absl::FormatDuration(options_.no_worker_timeout);
  for (auto it = queue_.begin(); it != queue_.end();) {
    const std::string& arch = it->job.cubin_arch();
    const int world_size = WorldSize(it->job);
    std::string why;
    if (world_size > 1) {
      // A gang needs `world_size` workers of one host. `since` is moved on
      // while such a host is connected, so it counts from when none was.
      const GangCapacity capacity =
          Capacity(workers_->LiveHostGpus(arch, now), world_size);
      if (capacity.can) it->since = now;
      if (now - it->since > options_.no_worker_timeout) {
        why = absl::StrCat(
            "the job spans ", world_size,
            " GPUs of one host, and no host "
            "with ",
            world_size, " connected ", arch,
            " GPU workers that all "
            "reach each other with peer access was seen for ",
            waited, " while it waited (the most on one host: ",
            capacity.Most(world_size),
            "). Start one kbworker per GPU (kbworker --gpu N) on a host with ",
            world_size, " ", arch,
            " GPUs linked by NVLink or peer-capable "
            "PCIe, each reporting the same host id (/etc/machine-id, or the "
            "same --host-id), and resubmit");
      }
    } else if (archs.count(arch) == 0) {
      const absl::Time since =
          std::max(it->since, workers_->LastSeenWithArch(arch));
      if (now - since > options_.no_worker_timeout) {
        why =
            archs.empty()
                ? absl::StrCat("no GPU worker connected for ", waited,
                               " while the job waited; start kbworker on a GPU "
                               "host (or kbd --local-worker=auto) and resubmit")
                : absl::StrCat(
                      "no GPU worker for ", arch,
                      " (the arch the job was compiled for) connected for ",
                      waited, " while the job waited; connected: ",
                      DescribeArchs(archs),
                      ". Resubmit without an arch (kbd then compiles for "
                      "a connected GPU), or connect a kbworker on a ",
                      arch, " GPU");
      }
    }
    if (why.empty()) {
      ++it;
      continue;
    }
    failed->emplace_back(it->job_id, Failure(absl::UnavailableError(why)));
    it = queue_.erase(it);
  }
}

}  // namespace kbench
