// Kbd: the kbench server, assembled. The one composition root: it builds
// the store, the problems, the compiler and its sandbox, the core
// (sessions, job table, finisher, scheduler, job service, agent service),
// the gRPC and HTTP front ends over that core, retention and the local
// workers, in dependency order (no component is handed another after it
// is built), and stops them in the reverse order. kbd_main.cc parses flags
// into Options and waits for a signal; tests run a Kbd in-process.
//
// Ownership: owns everything it builds.
// Thread safety: Start and Stop from one thread; the accessors after a
// successful Start. The components serve from their own threads.
#ifndef KBENCH_SERVER_KBD_H_
#define KBENCH_SERVER_KBD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "contract/job_defaults.h"

namespace kbench {

class Kbd {
 public:
  struct Options {
    // gRPC "address:port" (port 0 picks one; see grpc_port()).
    std::string listen = "127.0.0.1:50051";
    // HTTP tools, dashboard API and /metrics "address:port", or "off".
    std::string http_listen = "127.0.0.1:8080";
    // Host names (NAME or NAME:PORT) HTTP also answers to, and web origins
    // it accepts requests from, beyond loopback.
    std::vector<std::string> http_allowed_hosts;
    std::vector<std::string> http_allowed_origins;
    // Directory of the SQLite store (kbench.db) and the worker token.
    std::string data_dir;
    // Directory of problem files; "" = installed or source tree.
    std::string problems_dir;
    // Serve only these problems of the directory (empty: all of them).
    std::vector<std::string> problems;
    // Local workers: "off", "auto" (one per GPU) or a count.
    std::string local_worker = "off";
    // NVRTC threads (and kbcompile children); 0 = one per core.
    int compile_threads = 0;
    // Most compiles of one session running at once; 0 = half the threads.
    int compile_per_client = 0;
    // Run NVRTC in jailed kbcompile children (else in-process, which needs
    // trust_host_compiles).
    bool compile_sandbox = true;
    // Compile where no jail is possible: only when every client is trusted.
    bool trust_host_compiles = false;
    // The kbcompile executable; "" = beside the running executable.
    std::string kbcompile_binary;
    // Limits of one compile.
    int compile_cpu_limit_s = 20;
    int compile_wall_limit_s = 30;
    int compile_memory_limit_mb = 4096;
    // kbworker and kbrunner for local workers; "" = beside the executable.
    std::string worker_binary;
    std::string runner_binary;
    // Log level handed to local workers.
    std::string log_level = "info";
    // A lease is lost after this long without a heartbeat.
    int lease_ttl_ms = 10000;
    // Queued GPU jobs fail after this long with no worker.
    int no_worker_timeout_ms = 60000;
    // The token file workers must present; "" = DATA_DIR/worker.token,
    // created on first start.
    std::string worker_token_file;
    // The secret hidden cases are drawn from; "" = DATA_DIR/holdout.secret,
    // created on first start (server/core/holdout_keys.h).
    std::string holdout_secret_file;
    // Time budget for sampling one submit's timing.
    int timing_max_time_ms = kDefaultMaxTimeMs;
    // Fewest timed samples per side before the noise test may stop.
    int timing_min_samples = kDefaultMinSamples;
    // The noise test: relative standard error of the median at most this.
    double timing_max_rel_stderr = kDefaultMaxRelStderr;
    // Runner budgets are multiplied by this, for runners under a profiler.
    int budget_scale = 1;
    // Most jobs unfinished at once; past it submits are RESOURCE_EXHAUSTED.
    int max_unfinished_jobs = 4096;
    // Retention: age limit in days (0 = none) and size limit (0 = none).
    int retention_days = 30;
    int64_t store_max_bytes = int64_t{2} << 30;
  };

  explicit Kbd(const Options& options);
  ~Kbd();  // Stops it if started.
  Kbd(const Kbd&) = delete;
  Kbd& operator=(const Kbd&) = delete;

  // Builds and starts everything. On error (the data directory, the token,
  // the store, the problems, the jail, a port in use) nothing is left
  // running and the status says what to fix.
  absl::Status Start();
  // Stops serving: HTTP tool calls first, then local workers, gRPC (2 s for
  // calls in flight), compiles. Idempotent.
  void Stop();

  // "host:port" of gRPC, as bound.
  std::string address() const;
  int grpc_port() const;
  // 0 when HTTP is off.
  int http_port() const;
  const std::string& worker_token_file() const;

 private:
  struct Parts;  // Everything Start builds (server/kbd.cc).

  Options options_;
  std::unique_ptr<Parts> parts_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_KBD_H_
