#include "server/core/scheduler.h"

#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/error_proto.h"
#include "base/untrusted_input.h"
#include "server/core/result_check.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

// Longest stage detail a heartbeat may set ("checking odd/b7, trial 3/5").
constexpr size_t kMaxDetailBytes = 512;

v1::JobResult Failure(const absl::Status& status) {
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
      if (it->second.worker_id != worker.worker_id()) {
        ++it;
        continue;
      }
      it = LoseLeaseLocked(
          it,
          absl::StrCat(worker.worker_id(),
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
  bool matched = false;
  // Oldest job first, each to the longest-waiting worker of its arch.
  for (auto q = queue_.begin(); q != queue_.end() && !waiters_.empty();) {
    auto w = waiters_.begin();
    while (w != waiters_.end() &&
           w->second.worker.spec().arch() != q->job.cubin_arch()) {
      ++w;
    }
    if (w == waiters_.end()) {
      ++q;
      continue;
    }
    Waiter waiter = std::move(w->second);
    waiters_.erase(w);
    Queued job = std::move(*q);
    q = queue_.erase(q);
    Lease lease = StartLeaseLocked(std::move(job), waiter.worker);
    calls->push_back(
        [reply = std::move(waiter.reply), lease = std::move(lease)]() mutable {
          reply(std::move(lease));
        });
    matched = true;
  }
  if (matched) UpdatePositionsLocked();
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
  const std::string& worker_id = worker.worker_id();
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
  const std::map<std::string, int> archs = workers_->LiveArchs(absl::Now());
  for (const Queued& q : queue_) {
    ++pos;
    const std::string& arch = q.job.cubin_arch();
    std::string detail = "waiting for a free GPU";
    if (archs.count(arch) == 0) {
      detail =
          absl::StrCat("waiting for a GPU worker to connect (the job needs ",
                       arch, "; connected: ", DescribeArchs(archs), ")");
    }
    (void)jobs_->Update(q.job_id, [&](v1::Job* j) {
      j->set_stage(v1::STAGE_WAITING_GPU);
      j->set_queue_position(pos);
      j->set_stage_detail(detail);
    });
  }
}

std::map<std::string, Scheduler::Active>::iterator Scheduler::LoseLeaseLocked(
    std::map<std::string, Active>::iterator it, const std::string& how,
    bool restarted, Failed* failed) {
  Active& a = it->second;
  workers_->SetCurrentJob(a.worker_id, "");
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
  if (it == leases_.end() || it->second.worker_id != worker_id) return reply;
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
    if (it == leases_.end() || it->second.worker_id != worker_id) {
      return absl::FailedPreconditionError(absl::StrCat(
          "lease '", lease_id,
          "' is not held by this worker (it expired, or its job was "
          "cancelled or re-queued); drop the result"));
    }
    job_id = it->second.queued.job_id;
    job = std::move(it->second.queued.job);
    const bool cancelled = it->second.cancelled;
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
    bool requeued = false;
    for (auto it = leases_.begin(); it != leases_.end();) {
      const Active& a = it->second;
      if (now - a.last_heartbeat <= options_.lease_ttl) {
        ++it;
        continue;
      }
      const std::string how =
          absl::StrCat(a.worker_id, " stopped heartbeating (no heartbeat for ",
                       absl::FormatDuration(absl::Trunc(
                           now - a.last_heartbeat, absl::Milliseconds(100))),
                       ")");
      it = LoseLeaseLocked(it, how, /*restarted=*/false, &failed);
      requeued = true;
    }
    // Jobs that cannot be served: no worker of their arch has been seen
    // for too long.
    if (!queue_.empty()) {
      const std::map<std::string, int> archs = workers_->LiveArchs(now);
      for (auto it = queue_.begin(); it != queue_.end();) {
        const std::string& arch = it->job.cubin_arch();
        if (archs.count(arch) > 0) {
          ++it;
          continue;
        }
        const absl::Time since =
            std::max(it->since, workers_->LastSeenWithArch(arch));
        if (now - since <= options_.no_worker_timeout) {
          ++it;
          continue;
        }
        const std::string waited =
            absl::FormatDuration(options_.no_worker_timeout);
        failed.emplace_back(
            it->job_id,
            Failure(absl::UnavailableError(
                archs.empty()
                    ? absl::StrCat(
                          "no GPU worker connected for ", waited,
                          " while the job waited; start kbworker on a GPU "
                          "host (or kbd --local-worker=auto) and resubmit")
                    : absl::StrCat(
                          "no GPU worker for ", arch,
                          " (the arch the job "
                          "was compiled for) connected for ",
                          waited, " while the job waited; connected: ",
                          DescribeArchs(archs),
                          ". Resubmit without an arch (kbd then compiles for "
                          "a connected GPU), or connect a kbworker on a ",
                          arch, " GPU"))));
        it = queue_.erase(it);
        requeued = true;
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
