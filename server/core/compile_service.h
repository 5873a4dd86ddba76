// CompileService: NVRTC compiles on a pool of CPU threads, behind a
// content-addressed cache. The key is the sha256 of source + NVRTC options +
// NVRTC version + arch (+ the file name shown in diagnostics). Hits come
// from memory (LRU) or the Store (persistent across restarts); identical
// compiles in flight are merged, so each key compiles at most once at a
// time. Only deterministic outcomes are cached: a finished compile (a
// compile error too) in memory and the store, a sandbox CPU-time or memory
// limit (ResourceExhausted) in memory only. A wall-clock limit (it depends
// on the machine's load), UNAVAILABLE (a compiler child killed from
// outside), INTERNAL, CANCELLED and DEADLINE_EXCEEDED are never cached: the
// next identical call compiles again.
//
// Capacity is shared fairly: each call names its client (Caller::client);
// at most Options::per_client_running compiles of one client run at once,
// and the queue is served round-robin across clients, so a client sending
// compile bombs stalls only itself. A compile whose every caller is gone
// (Caller::gone) when a thread would start it is dropped, never run.
//
// With a CompileSandbox, NVRTC runs in its child processes (CPU, memory and
// wall-clock limits); the compiler then only computes cache keys. Without
// one, NVRTC runs in this process.
//
// Ownership: borrows the compiler, the store (may be null) and the sandbox
// (may be null), which must outlive it; owns its threads, joined by the
// destructor.
// Thread safety: every method is thread safe. Callbacks run on a pool
// thread, or inline in Compile() for a memory hit or a caller already gone;
// they must not block.
#ifndef KBENCH_SERVER_CORE_COMPILE_SERVICE_H_
#define KBENCH_SERVER_CORE_COMPILE_SERVICE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "base/metrics.h"
#include "compiler/nvrtc_compiler.h"
#include "compiler/sandbox/compile_sandbox.h"
#include "kbench/v1/report.pb.h"
#include "server/store/store.h"

namespace kbench {

class CompileService {
 public:
  // Compiles in place of the sandbox or the compiler (tests: a slow or
  // failing fake). Called on a pool thread.
  using CompileFn = std::function<absl::StatusOr<CompileOutput>(
      const std::string& source, const std::string& filename,
      const std::string& arch)>;

  struct Options {
    // Compile threads; 0 means one per CPU core.
    int threads = 0;
    // Results kept in memory (least recently used are dropped first; the
    // store keeps every one).
    size_t memory_entries = 256;
    // Most compiles of one client running at once; 0 means
    // max(1, threads / 2). The rest of the threads stay for other clients.
    int per_client_running = 0;
    // When set, compiles with this instead of the sandbox or the compiler
    // (the compiler still makes the cache keys).
    CompileFn compile_fn;
  };

  // Who asks for a compile.
  struct Caller {
    // Fairness key: the session id if there is one, else the peer. Calls
    // with the same key share one client's share of the threads; "" is one
    // shared anonymous client.
    std::string client;
    // True once the caller no longer wants the result (its job was
    // cancelled, its deadline passed). Null means never. Called on a pool
    // thread without the service's lock held, before the compile starts;
    // must be quick and thread safe.
    std::function<bool()> gone;
  };

  struct Result {
    v1::CompileReport report;  // report.cached is set on hits and merges.
    std::shared_ptr<const std::string> cubin;  // Empty when not compiled.
  };
  using Callback = std::function<void(absl::StatusOr<Result>)>;

  struct Stats {
    int64_t compiles = 0;  // NVRTC runs.
    int64_t memory_hits = 0;
    int64_t store_hits = 0;
    int64_t merged = 0;  // Requests that joined a compile in flight.
    // Compiles dropped before they ran because every caller was gone.
    int64_t dropped = 0;
    // Failed compiles not cached because the failure says nothing about
    // the source (UNAVAILABLE, INTERNAL, a wall-clock limit, ...).
    int64_t not_cached = 0;
    // Compiles waiting for a thread, and running, now.
    int64_t queued = 0;
    int64_t running = 0;
  };

  // `sandbox` must have been built with compiler->options() as its
  // compile_options (so cache keys describe what it compiles).
  CompileService(const Options& options, const NvrtcCompiler* compiler,
                 Store* store, CompileSandbox* sandbox = nullptr);
  // Calls Shutdown().
  ~CompileService();

  // Stops accepting work, joins the threads and calls back every request
  // still waiting with UNAVAILABLE. Idempotent. Call it while the objects
  // the callbacks use are still alive (kbd: right after the gRPC server
  // stops).
  void Shutdown();

  CompileService(const CompileService&) = delete;
  CompileService& operator=(const CompileService&) = delete;

  // Compiles `source` for `arch` and calls `done` exactly once: with the
  // result, with CANCELLED when the compile was dropped because every
  // caller was gone, or with UNAVAILABLE when the service is shutting down
  // (shutting_down() is then true).
  void Compile(const std::string& source, const std::string& filename,
               const std::string& arch, Caller caller, Callback done);
  // The same for the shared anonymous client that is never gone.
  void Compile(const std::string& source, const std::string& filename,
               const std::string& arch, Callback done);

  // Whether a failed compile's status says something about the source, so
  // that it may be cached: a sandbox limit on CPU time or memory.
  static bool IsDeterministicFailure(const absl::Status& status);

  // True once Shutdown() has begun.
  bool shutting_down() const;

  // The cache key Compile uses.
  std::string Key(const std::string& source, const std::string& filename,
                  const std::string& arch) const;

  Stats stats() const;

 private:
  struct Task {
    std::string key, source, filename, arch, client;
  };
  struct Waiter {
    Callback done;
    std::function<bool()> gone;
  };
  void WorkerLoop();
  // Takes the next task, round-robin over clients under their running
  // limit, and counts it as running. False when none may start.
  bool PickTask(Task* task) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops `task` if every caller waiting for it is gone (calls them back
  // with CANCELLED); true when dropped. Takes mu_ itself.
  bool DropIfAbandoned(const Task& task) ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<Result> Produce(const Task& task);
  void Remember(const std::string& key, const Result& result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Finished(const std::string& client) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const NvrtcCompiler* compiler_;
  Store* store_;
  CompileSandbox* sandbox_;
  Options options_;

  int per_client_running_ = 1;

  mutable absl::Mutex mu_;
  absl::CondVar work_;  // Signalled when a task may have become pickable.
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Queued tasks per client (only clients with some), and the clients in
  // round-robin order (each once).
  std::map<std::string, std::deque<Task>> queues_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> turns_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> running_ ABSL_GUARDED_BY(mu_);
  int64_t queued_ ABSL_GUARDED_BY(mu_) = 0;
  // Callers waiting for each key queued or running.
  std::map<std::string, std::vector<Waiter>> in_flight_ ABSL_GUARDED_BY(mu_);
  // LRU: most recent at the front; the map points into the list.
  std::list<std::pair<std::string, Result>> lru_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::list<std::pair<std::string, Result>>::iterator>
      index_ ABSL_GUARDED_BY(mu_);
  // Compiles stopped by a sandbox limit, by key (bounded; cleared when full).
  std::map<std::string, absl::Status> limit_hits_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_;
};

// Adds the service's counters to `metrics`: kbench_compile_total{outcome}
// (compiled, memory_hit, store_hit, merged, dropped, not_cached) and
// kbench_compile_queue{state} (queued, running). `service` must outlive
// the last scrape.
absl::Status RegisterCompileMetrics(Metrics* metrics,
                                    const CompileService* service);

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_COMPILE_SERVICE_H_
