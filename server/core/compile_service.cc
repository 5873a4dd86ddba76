#include "server/core/compile_service.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/digest.h"
#include "spdlog/spdlog.h"

namespace kbench {

CompileService::CompileService(const Options& options,
                               const NvrtcCompiler* compiler, Store* store,
                               CompileSandbox* sandbox)
    : compiler_(compiler), store_(store), sandbox_(sandbox), options_(options) {
  int n = options.threads;
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  if (n <= 0) n = 2;
  per_client_running_ = options.per_client_running > 0
                            ? options.per_client_running
                            : std::max(1, n / 2);
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { WorkerLoop(); });
}

CompileService::~CompileService() { Shutdown(); }

void CompileService::Shutdown() {
  std::map<std::string, std::vector<Waiter>> waiting;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    queues_.clear();
    turns_.clear();
    queued_ = 0;
    work_.SignalAll();
  }
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  {
    absl::MutexLock lock(&mu_);
    waiting.swap(in_flight_);
  }
  for (auto& [key, waiters] : waiting) {
    for (Waiter& w : waiters) {
      w.done(absl::UnavailableError("the server is shutting down"));
    }
  }
}

bool CompileService::shutting_down() const {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

bool CompileService::IsDeterministicFailure(const absl::Status& status) {
  // The sandbox says "wall-clock limit" when it stopped a compile that was
  // slow in real time; on a loaded machine a good kernel can be.
  return absl::IsResourceExhausted(status) &&
         !absl::StrContains(status.message(), "wall-clock");
}

std::string CompileService::Key(const std::string& source,
                                const std::string& filename,
                                const std::string& arch) const {
  return Sha256Hex(
      absl::StrCat(compiler_->CacheKey(source, arch), "\n", filename));
}

void CompileService::Compile(const std::string& source,
                             const std::string& filename,
                             const std::string& arch, Callback done) {
  Compile(source, filename, arch, Caller{}, std::move(done));
}

void CompileService::Compile(const std::string& source,
                             const std::string& filename,
                             const std::string& arch, Caller caller,
                             Callback done) {
  if (caller.gone && caller.gone()) {
    done(absl::CancelledError(
        "the caller went away before the compile started"));
    return;
  }
  const std::string key = Key(source, filename, arch);
  Result hit;
  absl::Status limit_hit;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      hit.cubin = nullptr;
    } else if (auto l = limit_hits_.find(key); l != limit_hits_.end()) {
      limit_hit = l->second;
      ++stats_.memory_hits;
    } else if (auto it = index_.find(key); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      hit = it->second->second;
      ++stats_.memory_hits;
    } else if (auto f = in_flight_.find(key); f != in_flight_.end()) {
      f->second.push_back(Waiter{std::move(done), std::move(caller.gone)});
      ++stats_.merged;
      return;
    } else {
      in_flight_[key].push_back(
          Waiter{std::move(done), std::move(caller.gone)});
      std::deque<Task>& q = queues_[caller.client];
      if (q.empty()) turns_.push_back(caller.client);
      q.push_back(Task{key, source, filename, arch, caller.client});
      ++queued_;
      work_.Signal();
      return;
    }
  }
  if (!limit_hit.ok()) {
    done(limit_hit);
    return;
  }
  if (hit.cubin == nullptr) {  // Only when stopping: hits always hold one.
    done(absl::UnavailableError("the server is shutting down"));
    return;
  }
  hit.report.set_cached(true);
  done(std::move(hit));
}

bool CompileService::PickTask(Task* task) {
  // Each client with queued work gets one look per round: the first under
  // its running limit, in round-robin order, gives its oldest task and goes
  // to the back.
  const size_t clients = turns_.size();
  for (size_t i = 0; i < clients; ++i) {
    std::string client = std::move(turns_.front());
    turns_.pop_front();
    auto q = queues_.find(client);
    if (q == queues_.end()) continue;  // No work left: out of the ring.
    auto r = running_.find(client);
    if (r != running_.end() && r->second >= per_client_running_) {
      turns_.push_back(std::move(client));
      continue;
    }
    *task = std::move(q->second.front());
    q->second.pop_front();
    --queued_;
    ++running_[client];
    if (q->second.empty()) {
      queues_.erase(q);
    } else {
      turns_.push_back(std::move(client));
    }
    return true;
  }
  return false;
}

void CompileService::Finished(const std::string& client) {
  auto it = running_.find(client);
  if (it != running_.end() && --it->second <= 0) running_.erase(it);
  // That client may be under its limit again.
  work_.Signal();
}

bool CompileService::DropIfAbandoned(const Task& task) {
  while (true) {
    std::vector<std::function<bool()>> gone;
    {
      absl::MutexLock lock(&mu_);
      auto it = in_flight_.find(task.key);
      if (it == in_flight_.end()) return false;
      for (const Waiter& w : it->second) {
        if (!w.gone) return false;  // Someone who never goes away.
        gone.push_back(w.gone);
      }
    }
    // Asked without the lock: a caller's check may take its own locks.
    for (const auto& g : gone) {
      if (!g()) return false;
    }
    std::vector<Waiter> waiters;
    {
      absl::MutexLock lock(&mu_);
      auto it = in_flight_.find(task.key);
      if (it == in_flight_.end()) return false;
      if (it->second.size() != gone.size()) continue;  // Someone joined.
      waiters = std::move(it->second);
      in_flight_.erase(it);
      ++stats_.dropped;
      Finished(task.client);
    }
    for (Waiter& w : waiters) {
      w.done(absl::CancelledError(
          "the caller went away before the compile started; it was not run"));
    }
    return true;
  }
}

void CompileService::WorkerLoop() {
  while (true) {
    Task task;
    {
      absl::MutexLock lock(&mu_);
      while (!stopping_ && !PickTask(&task)) work_.Wait(&mu_);
      if (stopping_) return;
    }
    if (DropIfAbandoned(task)) continue;
    absl::StatusOr<Result> result = Produce(task);
    std::vector<Waiter> waiters;
    {
      absl::MutexLock lock(&mu_);
      Finished(task.client);
      if (result.ok()) {
        Remember(task.key, *result);
      } else if (IsDeterministicFailure(result.status())) {
        if (limit_hits_.size() >= 256) limit_hits_.clear();
        limit_hits_[task.key] = result.status();
      } else {
        ++stats_.not_cached;
      }
      auto it = in_flight_.find(task.key);
      if (it != in_flight_.end()) {
        waiters = std::move(it->second);
        in_flight_.erase(it);
      }
    }
    for (size_t i = 0; i < waiters.size(); ++i) {
      absl::StatusOr<Result> copy = result;
      if (copy.ok() && i > 0) copy->report.set_cached(true);
      waiters[i].done(std::move(copy));
    }
  }
}

absl::StatusOr<CompileService::Result> CompileService::Produce(
    const Task& task) {
  if (store_ != nullptr) {
    auto stored = store_->GetCompiled(task.key);
    if (stored.ok() && stored->has_value()) {
      Result r;
      r.report = std::move((*stored)->report);
      r.report.set_cached(true);
      r.cubin =
          std::make_shared<const std::string>(std::move((*stored)->cubin));
      absl::MutexLock lock(&mu_);
      ++stats_.store_hits;
      return r;
    }
    if (!stored.ok()) {
      spdlog::warn("compile cache lookup failed: {}",
                   std::string(stored.status().message()));
    }
  }
  auto out = options_.compile_fn
                 ? options_.compile_fn(task.source, task.filename, task.arch)
             : sandbox_ != nullptr
                 ? sandbox_->Compile(task.source, task.filename, task.arch)
                 : compiler_->Compile(task.source, task.filename, task.arch);
  {
    absl::MutexLock lock(&mu_);
    ++stats_.compiles;
  }
  if (!out.ok()) return out.status();
  Result r;
  r.report = std::move(out->report);
  r.cubin = std::make_shared<const std::string>(std::move(out->cubin));
  if (store_ != nullptr) {
    const absl::Status put = store_->PutCompiled(task.key, r.report, *r.cubin);
    if (!put.ok())
      spdlog::warn("compile cache write failed: {}",
                   std::string(put.message()));
  }
  return r;
}

void CompileService::Remember(const std::string& key, const Result& result) {
  if (index_.count(key)) return;
  lru_.emplace_front(key, result);
  index_[key] = lru_.begin();
  while (lru_.size() > std::max<size_t>(options_.memory_entries, 1)) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
}

CompileService::Stats CompileService::stats() const {
  absl::MutexLock lock(&mu_);
  Stats s = stats_;
  s.queued = queued_;
  s.running = 0;
  for (const auto& [client, n] : running_) s.running += n;
  return s;
}

absl::Status RegisterCompileMetrics(Metrics* metrics,
                                    const CompileService* service) {
  absl::Status s = metrics->AddCounterFn(
      "kbench_compile_total",
      "Compile requests by outcome: compiled (NVRTC ran), memory_hit, "
      "store_hit, merged (joined one in flight), dropped (every caller gone "
      "before it started), not_cached (a failure that says nothing about the "
      "source).",
      {"outcome"}, [service] {
        const CompileService::Stats st = service->stats();
        auto d = [](int64_t v) { return static_cast<double>(v); };
        return std::vector<Metrics::Sample>{{{"compiled"}, d(st.compiles)},
                                            {{"memory_hit"}, d(st.memory_hits)},
                                            {{"store_hit"}, d(st.store_hits)},
                                            {{"merged"}, d(st.merged)},
                                            {{"dropped"}, d(st.dropped)},
                                            {{"not_cached"}, d(st.not_cached)}};
      });
  if (!s.ok()) return s;
  return metrics->AddGaugeFn(
      "kbench_compile_queue", "Compiles waiting for a thread, and running.",
      {"state"}, [service] {
        const CompileService::Stats st = service->stats();
        return std::vector<Metrics::Sample>{
            {{"queued"}, static_cast<double>(st.queued)},
            {{"running"}, static_cast<double>(st.running)}};
      });
}

}  // namespace kbench
