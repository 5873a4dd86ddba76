#include "server/scheduler.h"

#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/grpc_status.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

v1::JobResult Failure(absl::Status status) {
  v1::JobResult r;
  r.set_verdict(v1::VERDICT_ERROR);
  *r.mutable_error() = ToErrorProto(status);
  r.set_message(std::string(status.message()));
  return r;
}

}  // namespace

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
    queue_.push_back(Queued{job_id, std::move(job), attempts, absl::Now()});
    UpdatePositionsLocked();
    MatchLocked(&calls);
  }
  for (auto& c : calls) c();
}

int64_t Scheduler::RequestLease(const v1::WorkerInfo& worker,
                                absl::Duration wait, LeaseReply reply) {
  workers_->Touch(worker, absl::Now());
  Calls calls;
  int64_t id = 0;
  {
    absl::MutexLock lock(&mu_);
    id = next_id_++;
    if (stopping_) {
      calls.push_back([reply] { reply(std::nullopt); });
    } else {
      waiters_[id] =
          Waiter{worker, absl::Now() + std::min(wait, options_.max_wait),
                 std::move(reply)};
      MatchLocked(&calls);
    }
  }
  for (auto& c : calls) c();
  return id;
}

void Scheduler::CancelWait(int64_t waiter_id) {
  absl::MutexLock lock(&mu_);
  waiters_.erase(waiter_id);
}

void Scheduler::MatchLocked(Calls* calls) {
  while (!queue_.empty() && !waiters_.empty()) {
    auto w = waiters_.begin();
    Waiter waiter = std::move(w->second);
    waiters_.erase(w);
    Queued q = std::move(queue_.front());
    queue_.pop_front();
    Lease lease = StartLeaseLocked(std::move(q), waiter.worker);
    calls->push_back(
        [reply = std::move(waiter.reply), lease = std::move(lease)]() mutable {
          reply(std::move(lease));
        });
  }
  if (!calls->empty()) UpdatePositionsLocked();
}

Scheduler::Lease Scheduler::StartLeaseLocked(Queued q,
                                             const v1::WorkerInfo& worker) {
  Lease lease;
  lease.lease_id = absl::StrFormat("l-%d-%016x", next_id_++,
                                   absl::Uniform<uint64_t>(absl::BitGen()));
  lease.attempt = ++q.attempts;
  lease.job = q.job;
  lease.ttl = options_.lease_ttl;
  const std::string job_id = q.job_id;
  Active a{std::move(q), worker.worker_id(), absl::Now(), false};
  leases_[lease.lease_id] = std::move(a);
  workers_->SetCurrentJob(worker.worker_id(), job_id);
  const std::string worker_id = worker.worker_id();
  const int attempt = lease.attempt;
  (void)jobs_->Update(job_id, [&](v1::Job* j) {
    j->set_stage(v1::STAGE_RUNNING);
    j->set_stage_detail(absl::StrCat("leased by ", worker_id));
    j->set_worker_id(worker_id);
    j->set_attempts(attempt);
    j->set_queue_position(0);
  });
  return lease;
}

void Scheduler::UpdatePositionsLocked() {
  int pos = 0;
  const bool live = workers_->AnyLive(absl::Now());
  for (const Queued& q : queue_) {
    ++pos;
    (void)jobs_->Update(q.job_id, [&](v1::Job* j) {
      j->set_stage(v1::STAGE_WAITING_GPU);
      j->set_queue_position(pos);
      j->set_stage_detail(live ? "waiting for a free GPU"
                               : "waiting for a GPU worker to connect");
    });
  }
}

Scheduler::HeartbeatReply Scheduler::Heartbeat(const std::string& worker_id,
                                               const std::string& lease_id,
                                               const std::string& detail) {
  workers_->TouchId(worker_id, absl::Now());
  absl::MutexLock lock(&mu_);
  HeartbeatReply reply;
  auto it = leases_.find(lease_id);
  if (it == leases_.end() || it->second.worker_id != worker_id) return reply;
  it->second.last_heartbeat = absl::Now();
  reply.lease_valid = true;
  reply.cancel = it->second.cancelled;
  if (!detail.empty() && !it->second.cancelled) {
    (void)jobs_->Update(it->second.queued.job_id,
                        [&](v1::Job* j) { j->set_stage_detail(detail); });
  }
  return reply;
}

absl::Status Scheduler::Complete(const std::string& worker_id,
                                 const std::string& lease_id,
                                 v1::JobResult result) {
  std::string job_id;
  {
    absl::MutexLock lock(&mu_);
    auto it = leases_.find(lease_id);
    if (it == leases_.end() || it->second.worker_id != worker_id) {
      return absl::FailedPreconditionError(absl::StrCat(
          "lease '", lease_id,
          "' is not held by this worker (it expired, or its job was "
          "cancelled or re-queued); drop the result"));
    }
    job_id = it->second.queued.job_id;
    const bool cancelled = it->second.cancelled;
    leases_.erase(it);
    workers_->SetCurrentJob(worker_id, "");
    if (cancelled) return absl::OkStatus();  // Already finished by Cancel.
  }
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
  std::vector<std::pair<std::string, v1::JobResult>> failed;
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
    bool requeued = false;
    for (auto it = leases_.begin(); it != leases_.end();) {
      Active& a = it->second;
      if (now - a.last_heartbeat <= options_.lease_ttl) {
        ++it;
        continue;
      }
      workers_->SetCurrentJob(a.worker_id, "");
      const std::string job_id = a.queued.job_id;
      spdlog::warn("lease {} of job {} lost: no heartbeat from {} for {}",
                   it->first, job_id, a.worker_id,
                   absl::FormatDuration(now - a.last_heartbeat));
      if (a.cancelled) {
        // Finished by Cancel already; nothing to re-run.
      } else if (a.queued.attempts >= options_.max_attempts) {
        failed.emplace_back(
            job_id,
            Failure(absl::UnavailableError(absl::StrFormat(
                "the job lost its GPU worker %d times (last: %s stopped "
                "heartbeating); the kernel may be crashing the worker host",
                a.queued.attempts, a.worker_id))));
      } else {
        a.queued.since = now;
        queue_.push_front(std::move(a.queued));
        requeued = true;
      }
      it = leases_.erase(it);
    }
    // Jobs that cannot be served: nobody has been seen for too long.
    if (!queue_.empty() && !workers_->AnyLive(now)) {
      const absl::Time last = workers_->LastSeen();
      for (auto it = queue_.begin(); it != queue_.end();) {
        const absl::Time since = std::max(it->since, last);
        if (now - since > options_.no_worker_timeout) {
          failed.emplace_back(
              it->job_id,
              Failure(absl::UnavailableError(absl::StrCat(
                  "no GPU worker connected for ",
                  absl::FormatDuration(options_.no_worker_timeout),
                  " while the job waited; start kbworker on a GPU host (or "
                  "kbd --local-worker=auto) and resubmit"))));
          it = queue_.erase(it);
        } else {
          ++it;
        }
      }
    }
    if (requeued) UpdatePositionsLocked();
    MatchLocked(&calls);
  }
  for (auto& c : calls) c();
  for (auto& [job_id, result] : failed) finish_(job_id, std::move(result));
  jobs_->Evict(absl::Now());
}

}  // namespace kbench
