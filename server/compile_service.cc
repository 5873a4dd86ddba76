#include "server/compile_service.h"

#include "absl/strings/str_cat.h"
#include "common/digest.h"
#include "spdlog/spdlog.h"

namespace kbench {

CompileService::CompileService(const Options& options,
                               const NvrtcCompiler* compiler, Store* store,
                               CompileSandbox* sandbox)
    : compiler_(compiler), store_(store), sandbox_(sandbox), options_(options) {
  int n = options.threads;
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  if (n <= 0) n = 2;
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { WorkerLoop(); });
}

CompileService::~CompileService() { Shutdown(); }

void CompileService::Shutdown() {
  std::deque<Task> dropped;
  std::map<std::string, std::vector<Callback>> waiting;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    dropped.swap(queue_);
  }
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  {
    absl::MutexLock lock(&mu_);
    waiting.swap(in_flight_);
  }
  for (auto& [key, callbacks] : waiting) {
    for (Callback& cb : callbacks) {
      cb(absl::UnavailableError("the server is shutting down"));
    }
  }
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
      f->second.push_back(std::move(done));
      ++stats_.merged;
      return;
    } else {
      in_flight_[key].push_back(std::move(done));
      queue_.push_back(Task{key, source, filename, arch});
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

void CompileService::WorkerLoop() {
  while (true) {
    Task task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](CompileService* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu_) {
            return s->stopping_ || !s->queue_.empty();
          },
          this));
      if (stopping_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    absl::StatusOr<Result> result = Produce(task);
    std::vector<Callback> callbacks;
    {
      absl::MutexLock lock(&mu_);
      if (result.ok()) Remember(task.key, *result);
      if (absl::IsResourceExhausted(result.status())) {
        if (limit_hits_.size() >= 256) limit_hits_.clear();
        limit_hits_[task.key] = result.status();
      }
      auto it = in_flight_.find(task.key);
      if (it != in_flight_.end()) {
        callbacks = std::move(it->second);
        in_flight_.erase(it);
      }
    }
    for (size_t i = 0; i < callbacks.size(); ++i) {
      absl::StatusOr<Result> copy = result;
      if (copy.ok() && i > 0) copy->report.set_cached(true);
      callbacks[i](std::move(copy));
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
  auto out = sandbox_ != nullptr
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
  return stats_;
}

}  // namespace kbench
