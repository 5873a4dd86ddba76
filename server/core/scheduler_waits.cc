// Scheduler: what queued jobs wait for, and when a wait or a lease ends
// without a result (stage details, lost leases, jobs no worker can serve).
// The class is declared in server/core/scheduler.h.
#include <algorithm>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/core/scheduler.h"
#include "server/core/scheduler_internal.h"

namespace kbench {
namespace {

using scheduler_internal::Failure;
using scheduler_internal::WorldSize;

// The most connected GPU workers of one arch on one host.
int MostOnOneHost(const std::map<std::string, int>& hosts) {
  int most = 0;
  for (const auto& [host, n] : hosts) most = std::max(most, n);
  return most;
}

}  // namespace

std::string Scheduler::GangWaitDetail(const Queued& q,
                                      const std::map<std::string, int>& hosts) {
  const std::string& arch = q.job.cubin_arch();
  const int world_size = WorldSize(q.job);
  const int most = MostOnOneHost(hosts);
  if (most >= world_size) {
    return absl::StrCat("waiting for ", world_size, " ", arch,
                        " GPUs of one host to be free together (a gang "
                        "lease; one-GPU jobs no longer start on the host "
                        "held for it)");
  }
  return absl::StrCat("waiting for a host with ", world_size, " connected ",
                      arch, " GPU workers (the job spans ", world_size,
                      " GPUs of one host; the most on one host now: ", most,
                      "); start one kbworker per GPU on such a host");
}

void Scheduler::UpdatePositionsLocked() {
  int pos = 0;
  const absl::Time now = absl::Now();
  const std::map<std::string, int> archs = workers_->LiveArchs(now);
  std::map<std::string, std::map<std::string, int>> hosts;  // By arch.
  for (Queued& q : queue_) {
    ++pos;
    const std::string& arch = q.job.cubin_arch();
    std::string detail = "waiting for a free GPU";
    if (WorldSize(q.job) > 1) {
      auto it = hosts.find(arch);
      if (it == hosts.end()) {
        it = hosts.emplace(arch, workers_->LiveOnHosts(arch, now)).first;
      }
      detail = GangWaitDetail(q, it->second);
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
      const int most = MostOnOneHost(workers_->LiveOnHosts(arch, now));
      if (most >= world_size) it->since = now;
      if (now - it->since > options_.no_worker_timeout) {
        why = absl::StrCat(
            "the job spans ", world_size,
            " GPUs of one host, and no host "
            "with ",
            world_size, " connected ", arch,
            " GPU workers was seen "
            "for ",
            waited, " while it waited (the most on one host: ", most,
            "). Start one kbworker per GPU (kbworker --gpu N) on a host with ",
            world_size, " ", arch,
            " GPUs, each reporting the same host id "
            "(/etc/machine-id, or the same --host-id), and resubmit");
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
