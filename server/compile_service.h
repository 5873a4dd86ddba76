// CompileService: NVRTC compiles on a pool of CPU threads, behind a
// content-addressed cache. The key is the sha256 of source + NVRTC options +
// NVRTC version + arch (+ the file name shown in diagnostics). Hits come
// from memory (LRU) or the Store (persistent across restarts); identical
// compiles in flight are merged, so each key compiles at most once at a
// time. Compile failures are cached too: they are deterministic; so are
// compiles stopped by a sandbox limit (ResourceExhausted), in memory only.
//
// With a CompileSandbox, NVRTC runs in its child processes (CPU, memory and
// wall-clock limits); the compiler then only computes cache keys. Without
// one, NVRTC runs in this process.
//
// Ownership: borrows the compiler, the store (may be null) and the sandbox
// (may be null), which must outlive it; owns its threads, joined by the
// destructor.
// Thread safety: every method is thread safe. Callbacks run on a pool
// thread, or inline in Compile() for a memory hit; they must not block.
#ifndef KBENCH_SERVER_COMPILE_SERVICE_H_
#define KBENCH_SERVER_COMPILE_SERVICE_H_

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
#include "common/nvrtc_compiler.h"
#include "kbench/v1/report.pb.h"
#include "server/compile_sandbox.h"
#include "server/store.h"

namespace kbench {

class CompileService {
 public:
  struct Options {
    // Compile threads; 0 means one per CPU core.
    int threads = 0;
    // Results kept in memory (least recently used are dropped first; the
    // store keeps every one).
    size_t memory_entries = 256;
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

  // Compiles `source` for `arch` and calls `done` exactly once.
  void Compile(const std::string& source, const std::string& filename,
               const std::string& arch, Callback done);

  // The cache key Compile uses.
  std::string Key(const std::string& source, const std::string& filename,
                  const std::string& arch) const;

  Stats stats() const;

 private:
  struct Task {
    std::string key, source, filename, arch;
  };
  void WorkerLoop();
  absl::StatusOr<Result> Produce(const Task& task);
  void Remember(const std::string& key, const Result& result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const NvrtcCompiler* compiler_;
  Store* store_;
  CompileSandbox* sandbox_;
  Options options_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<Task> queue_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<Callback>> in_flight_ ABSL_GUARDED_BY(mu_);
  // LRU: most recent at the front; the map points into the list.
  std::list<std::pair<std::string, Result>> lru_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::list<std::pair<std::string, Result>>::iterator>
      index_ ABSL_GUARDED_BY(mu_);
  // Compiles stopped by a sandbox limit, by key (bounded; cleared when full).
  std::map<std::string, absl::Status> limit_hits_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_COMPILE_SERVICE_H_
