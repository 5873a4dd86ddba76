#include "server/core/scheduler.h"

#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/untrusted_input.h"
#include "server/core/result_check.h"
#include "server/core/scheduler_internal.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

using scheduler_internal::Failure;
using scheduler_internal::WorldSize;

// Longest stage detail a heartbeat may set ("checking odd/b7, trial 3/5").
constexpr size_t kMaxDetailBytes = 512;

}  // namespace

bool Scheduler::Active::HeldBy(const std::string& id) const {
  if (worker_id == id) return true;
  for (const Parked& p : parked) {
    if (p.worker_id == id) return true;
  }
  return false;
}

Scheduler::Scheduler(const Options& options, JobTable* jobs,
                     WorkerRegistry* workers, FinishFn finish)
    : options_(options),
      jobs_(jobs),
      workers_(workers),
      finish_(std::move(finish)) {
  ticker_ = std::thread([this] {
    while (true) {
      {
        absl::MutexLock lock(&mu_);
        mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.tick);
        if (stopping_) return;
      }
      Tick();
    }
  });
}

Scheduler::~Scheduler() {
  std::map<int64_t, Waiter> waiters;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    waiters.swap(waiters_);
  }
  ticker_.join();
  for (auto& [id, w] : waiters) w.reply(std::nullopt);
}

void Scheduler::Enqueue(const std::string& job_id, v1::RunnerJob job,
                        int attempts) {
  Calls calls;
  {
    absl::MutexLock lock(&mu_);
    Queued q;
    q.job_id = job_id;
    q.job = std::move(job);
    q.attempts = attempts;
    q.since = absl::Now();
    queue_.push_back(std::move(q));
    UpdatePositionsLocked();
    MatchLocked(&calls);
  }
  for (auto& c : calls) c();
}

absl::StatusOr<int64_t> Scheduler::RequestLease(const v1::WorkerInfo& worker,
                                                absl::Duration wait,
                                                LeaseReply reply) {
  const absl::Time now = absl::Now();
  Calls calls;
  Failed failed;
  int64_t id = 0;
  {
    absl::MutexLock lock(&mu_);
    // Registered under the scheduler's lock (mu_ before the registry's, as
    // everywhere here): else a replaced instance that registered just
    // before the instance replacing it could, once the new one's request
    // has gone through, still answer its wait and give up its lease below.
    if (absl::Status s = workers_->Register(worker, now); !s.ok()) return s;
    id = next_id_++;
    // A worker long-polls once at a time: an older wait of the same id is
    // from before a restart (or a dropped connection); answer it empty.
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (it->second.worker.worker_id() != worker.worker_id()) {
        ++it;
        continue;
      }
      calls.push_back([r = std::move(it->second.reply)] { r(std::nullopt); });
      it = waiters_.erase(it);
    }
    // A worker that asks for a job while holding a lease lost that job (it
    // restarted, or gave up reporting it): give it up now, not after the
    // TTL.
    bool released = false;
    for (auto it = leases_.begin(); it != leases_.end();) {
      if (!it->second.HeldBy(worker.worker_id())) {
        ++it;
        continue;
      }
      const bool parked = it->second.worker_id != worker.worker_id();
      it = LoseLeaseLocked(
          it,
          absl::StrCat(worker.worker_id(),
                       parked ? " (parked in the job's gang)" : "",
                       " restarted while running it (it asked for a new job)"),
          /*restarted=*/true, &failed);
      released = true;
    }
    if (released) UpdatePositionsLocked();
    if (stopping_) {
      calls.push_back([reply] { reply(std::nullopt); });
    } else {
      waiters_[id] = Waiter{worker, now + std::min(wait, options_.max_wait),
                            std::move(reply)};
      MatchLocked(&calls);
    }
  }
  for (auto& c : calls) c();
  for (auto& [job_id, result] : failed) finish_(job_id, std::move(result));
  return id;
}

void Scheduler::CancelWait(int64_t waiter_id) {
  absl::MutexLock lock(&mu_);
  waiters_.erase(waiter_id);
}

void Scheduler::MatchLocked(Calls* calls) {
  if (queue_.empty() || waiters_.empty()) return;
  std::vector<IdlePool::Idle> idle;
  idle.reserve(waiters_.size());
  for (const auto& [id, w] : waiters_) {  // Ids grow: longest-waiting first.
    IdlePool::Idle& i = idle.emplace_back();
    i.waiter_id = id;
    i.arch = w.worker.spec().arch();
    i.host_id = w.worker.host_id();
    i.gpu_index = w.worker.gpu_index();
    for (const v1::GpuLink& l : w.worker.links()) {
      if (l.peer_access()) i.peers.insert(l.peer_gpu_index());
    }
  }
  IdlePool pool(std::move(idle));
  auto take = [this](int64_t waiter_id) {
    auto w = waiters_.find(waiter_id);
    Waiter waiter = std::move(w->second);
    waiters_.erase(w);
    return waiter;
  };
  // Connected workers per host, per arch, asked once a pass.
  std::map<std::string, std::map<std::string, HostGpus>> hosts;
  auto hosts_of = [&](const std::string& arch) -> const auto& {
    auto it = hosts.find(arch);
    if (it == hosts.end()) {
      it = hosts.emplace(arch, workers_->LiveHostGpus(arch, absl::Now())).first;
    }
    return it->second;
  };
  bool matched = false;
  // Oldest job first, each to the longest-waiting worker of its arch (or
  // the gang IdlePool picks).
  for (auto q = queue_.begin(); q != queue_.end() && !pool.Empty();) {
    const std::string& arch = q->job.cubin_arch();
    const int world_size = WorldSize(q->job);
    std::vector<Waiter> members;
    if (world_size == 1) {
      if (std::optional<int64_t> w = pool.TakeOne(arch)) {
        members.push_back(take(*w));
      }
    } else if (std::optional<std::vector<int64_t>> gang =
                   pool.TakeGang(arch, world_size)) {
      for (int64_t w : *gang) members.push_back(take(w));
    } else {
      pool.Hold(arch, world_size, hosts_of(arch));
    }
    if (members.empty()) {
      ++q;
      continue;
    }
    Queued job = std::move(*q);
    q = queue_.erase(q);
    StartLeaseLocked(std::move(job), std::move(members), calls);
    matched = true;
  }
  if (matched) UpdatePositionsLocked();
}

void Scheduler::StartLeaseLocked(Queued q, std::vector<Waiter> members,
                                 Calls* calls) {
  Lease lease;
  lease.lease_id = absl::StrFormat("l-%d-%016x", next_id_++,
                                   absl::Uniform<uint64_t>(absl::BitGen()));
  lease.attempt = ++q.attempts;
  lease.job = q.job;
  lease.ttl = options_.lease_ttl;
  const absl::Time now = absl::Now();
  const std::string job_id = q.job_id;
  const std::string& worker_id = members.front().worker.worker_id();
  q.shown_position = 0;  // Shown again in full if the job is re-queued.
  q.shown_detail.clear();
  Active a{std::move(q), worker_id, now, false, {}};
  if (members.size() > 1) {
    for (const Waiter& m : members) {
      v1::GangMember* g = lease.gang.add_members();
      g->set_worker_id(m.worker.worker_id());
      g->set_gpu_index(m.worker.gpu_index());
      if (&m != &members.front()) a.parked.push_back({g->worker_id(), now});
    }
  }
  for (const Waiter& m : members) {
    workers_->SetCurrentJob(m.worker.worker_id(), job_id);
  }
  leases_[lease.lease_id] = std::move(a);
  const int attempt = lease.attempt;
  (void)jobs_->Update(job_id, [&](v1::Job* j) {
    j->set_stage(v1::STAGE_RUNNING);
    j->set_stage_detail(members.size() > 1
                            ? absl::StrCat("leased by a gang of ",
                                           members.size(), " GPUs led by ",
                                           worker_id)
                            : absl::StrCat("leased by ", worker_id));
    j->set_worker_id(worker_id);
    j->clear_gang_worker_ids();
    if (members.size() > 1) {
      for (const Waiter& m : members) {
        j->add_gang_worker_ids(m.worker.worker_id());
      }
    }
    j->set_attempts(attempt);
    j->set_queue_position(0);
  });
  for (size_t i = 1; i < members.size(); ++i) {
    // Not a copy of the leader's: the job carries its cubins.
    Lease parked;
    parked.lease_id = lease.lease_id;
    parked.attempt = lease.attempt;
    parked.ttl = lease.ttl;
    parked.gang = lease.gang;
    parked.job.set_job_id(job_id);
    parked.job.set_world_size(lease.job.world_size());
    parked.gang.set_parked(true);
    calls->push_back(
        [reply = std::move(members[i].reply),
         parked = std::move(parked)]() mutable { reply(std::move(parked)); });
  }
  calls->push_back(
      [reply = std::move(members.front().reply),
       lease = std::move(lease)]() mutable { reply(std::move(lease)); });
}

std::map<std::string, Scheduler::Active>::iterator Scheduler::LoseLeaseLocked(
    std::map<std::string, Active>::iterator it, const std::string& how,
    bool restarted, Failed* failed) {
  Active& a = it->second;
  workers_->SetCurrentJob(a.worker_id, "");
  for (const Parked& p : a.parked) workers_->SetCurrentJob(p.worker_id, "");
  const std::string job_id = a.queued.job_id;
  spdlog::warn("lease {} of job {} lost: {}", it->first, job_id, how);
  if (a.cancelled) {
    // Finished by Cancel already; nothing to re-run.
  } else if (a.queued.attempts >= options_.max_attempts) {
    Queued& q = a.queued;
    q.losses.push_back(how);
    q.restarts += restarted ? 1 : 0;
    // A lost lease says a worker died or lost contact: not a verdict on
    // the kernel. Only when several workers went down while running this
    // very job may the kernel be what takes them down.
    std::string hint =
        "A worker that dies or loses contact with kbd is not the kernel's "
        "fault: check those workers' logs (journalctl -u 'kbworker@*') and "
        "their network, then resubmit";
    if (q.restarts >= 2) {
      hint = absl::StrCat(
          "Workers restarted ", q.restarts,
          " times while running this very job, so the kernel may be taking "
          "them down: check it with run_correctness on a small shape set or "
          "with sanitize_kernel, and see the workers' logs (journalctl -u "
          "'kbworker@*')");
    }
    failed->emplace_back(
        job_id, Failure(absl::UnavailableError(absl::StrFormat(
                    "the job's GPU workers lost it %d times: %s. %s",
                    q.attempts, absl::StrJoin(q.losses, "; "), hint))));
  } else {
    Queued q = std::move(a.queued);
    q.losses.push_back(how);
    q.restarts += restarted ? 1 : 0;
    q.since = absl::Now();
    queue_.push_front(std::move(q));
  }
  return leases_.erase(it);
}

Scheduler::HeartbeatReply Scheduler::Heartbeat(const std::string& worker_id,
                                               const std::string& lease_id,
                                               const std::string& detail) {
  workers_->TouchId(worker_id, absl::Now());
  absl::MutexLock lock(&mu_);
  HeartbeatReply reply;
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return reply;
  if (it->second.worker_id != worker_id) {
    // A parked member keeps the gang alive; its detail is not shown.
    for (Parked& p : it->second.parked) {
      if (p.worker_id != worker_id) continue;
      p.last_heartbeat = absl::Now();
      reply.lease_valid = true;
      reply.cancel = it->second.cancelled;
    }
    return reply;
  }
  it->second.last_heartbeat = absl::Now();
  reply.lease_valid = true;
  reply.cancel = it->second.cancelled;
  // The detail is shown to callers and stored: text only, bounded.
  if (!detail.empty() && !it->second.cancelled &&
      ValidateText(detail, kMaxDetailBytes, "stage_detail").ok()) {
    (void)jobs_->Update(it->second.queued.job_id,
                        [&](v1::Job* j) { j->set_stage_detail(detail); });
  }
  return reply;
}

absl::Status Scheduler::Complete(const std::string& worker_id,
                                 const std::string& lease_id,
                                 v1::JobResult result) {
  std::string job_id;
  v1::RunnerJob job;
  {
    absl::MutexLock lock(&mu_);
    auto it = leases_.find(lease_id);
    if (it != leases_.end() && it->second.worker_id != worker_id &&
        it->second.HeldBy(worker_id)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "worker '", worker_id, "' is a parked member of gang lease '",
          lease_id, "'; only its leader, '", it->second.worker_id,
          "', completes it. Drop the result"));
    }
    if (it == leases_.end() || it->second.worker_id != worker_id) {
      return absl::FailedPreconditionError(absl::StrCat(
          "lease '", lease_id,
          "' is not held by this worker (it expired, or its job was "
          "cancelled or re-queued); drop the result"));
    }
    job_id = it->second.queued.job_id;
    job = std::move(it->second.queued.job);
    const bool cancelled = it->second.cancelled;
    for (const Parked& p : it->second.parked) {
      workers_->SetCurrentJob(p.worker_id, "");
    }
    leases_.erase(it);
    workers_->SetCurrentJob(worker_id, "");
    if (cancelled) return absl::OkStatus();  // Already finished by Cancel.
  }
  const std::optional<v1::GpuSpec> spec = workers_->SpecOf(worker_id);
  absl::Status checked =
      spec ? CheckWorkerResult(job, *spec, result)
           : absl::InvalidArgumentError("the worker is not registered");
  if (!checked.ok()) {
    spdlog::error(
        "job {}: worker {} sent an inconsistent result (verdict {}); "
        "discarded: {}",
        job_id, worker_id, static_cast<int>(result.verdict()),
        std::string(checked.message()));
    v1::JobResult failure = Failure(absl::InternalError(absl::StrCat(
        "GPU worker ", worker_id,
        " sent an inconsistent result, so kbd discarded it; this is not the "
        "kernel's verdict. What was wrong: ",
        checked.message(),
        ". Resubmit; if it happens again, check that worker (its version and "
        "its log)")));
    failure.set_worker_id(worker_id);
    finish_(job_id, std::move(failure));
    return absl::InvalidArgumentError(
        absl::StrCat("kbd discarded the result of lease '", lease_id,
                     "' as inconsistent: ", checked.message()));
  }
  // A compile report is kbd's to make (the runner never compiles): one a
  // worker sends could contradict the verdict, so it is never kept.
  result.clear_compile();
  finish_(job_id, std::move(result));
  return absl::OkStatus();
}

bool Scheduler::Cancel(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->job_id == job_id) {
      queue_.erase(it);
      UpdatePositionsLocked();
      return true;
    }
  }
  for (auto& [id, a] : leases_) {
    if (a.queued.job_id == job_id) {
      a.cancelled = true;
      return true;
    }
  }
  return false;
}

int Scheduler::QueueDepth() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(queue_.size());
}

void Scheduler::Tick() {
  Calls calls;
  Failed failed;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = absl::Now();
    // Long-polls that ran out.
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (it->second.deadline <= now) {
        calls.push_back(
            [reply = std::move(it->second.reply)] { reply(std::nullopt); });
        it = waiters_.erase(it);
      } else {
        ++it;
      }
    }
    // Lost leases: re-queue at the front, or fail after max_attempts.
    for (auto it = leases_.begin(); it != leases_.end();) {
      const std::string how = StaleMember(it->second, now);
      if (how.empty()) {
        ++it;
        continue;
      }
      it = LoseLeaseLocked(it, how, /*restarted=*/false, &failed);
    }
    FailUnservableLocked(now, &failed);
    MatchLocked(&calls);
    // Every tick, not only after a change here: a queued job's detail
    // follows workers that connect or go (gangs wait on whole hosts).
    UpdatePositionsLocked();
  }
  for (auto& c : calls) c();
  for (auto& [job_id, result] : failed) finish_(job_id, std::move(result));
  jobs_->Evict(absl::Now());
}

}  // namespace kbench
