// kbd: the kbench server. Serves kbench.v1.Kbench (agent tools and jobs)
// and kbench.v1.WorkerService (for kbworker) over gRPC, with the health and
// reflection services, and over HTTP the agent tools (JSON), the dashboard's
// API (/api/...) and Prometheus metrics (/metrics); keeps jobs, sources,
// the compile cache and sessions in an embedded SQLite database under
// --data-dir; optionally starts one local kbworker per GPU. This file parses
// the flags; server/kbd.h assembles and runs the server.
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <signal.h>

#include <fstream>
#include <string>

#include "CLI/CLI.hpp"
#include "base/logging.h"
#include "base/paths.h"
#include "server/kbd.h"
#include "spdlog/spdlog.h"

namespace {

// Waits for SIGINT or SIGTERM (blocked in every thread, taken here).
int WaitForStopSignal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

}  // namespace

int main(int argc, char** argv) {
  // Block the stop signals before any thread starts, so sigwait takes them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);

  CLI::App app{
      "kbd: the kbench server (gRPC and HTTP agent tools, jobs and workers)"};
  kbench::Kbd::Options flags;
  flags.data_dir = kbench::DefaultDataDir();
  flags.kbcompile_binary = kbench::ExeDir() + "/kbcompile";
  flags.worker_binary = kbench::ExeDir() + "/kbworker";
  flags.runner_binary = kbench::ExeDir() + "/kbrunner";
  std::string port_file;
  std::string http_port_file;
  app.set_config("--config", "", "Read options from this file (key = value)");
  app.add_option("--listen", flags.listen,
                 "gRPC address:port (port 0 picks one)")
      ->capture_default_str();
  app.add_option("--data-dir", flags.data_dir,
                 "Directory of the SQLite store (kbench.db)")
      ->capture_default_str();
  app.add_option(
      "--problems-dir", flags.problems_dir,
      "Directory of problem files (default: installed or source tree)");
  app.add_option("--problems", flags.problems,
                 "Serve only these problems of the directory, by name "
                 "(comma-separated; default: all). kbd compiles each served "
                 "problem's kernels when it starts")
      ->delimiter(',');
  app.add_option("--local-worker", flags.local_worker,
                 "Start local workers: off, auto (one per GPU) or a count")
      ->capture_default_str();
  app.add_option("--compile-threads", flags.compile_threads,
                 "NVRTC threads; 0 = one per core")
      ->capture_default_str();
  app.add_flag("--trust-host-compiles", flags.trust_host_compiles,
               "compile even where the compiler cannot be jailed (no "
               "Landlock), or in-process with --compile-sandbox=false: only "
               "when every client is trusted, since a kernel source can then "
               "#include host files");
  app.add_option("--compile-sandbox", flags.compile_sandbox,
                 "Run NVRTC in kbcompile child processes with CPU, memory "
                 "and wall-clock limits")
      ->capture_default_str();
  app.add_option("--kbcompile-binary", flags.kbcompile_binary,
                 "kbcompile executable (the compile sandbox's child)")
      ->capture_default_str();
  app.add_option("--compile-cpu-limit-s", flags.compile_cpu_limit_s,
                 "CPU seconds one compile may use")
      ->capture_default_str();
  app.add_option("--compile-wall-limit-s", flags.compile_wall_limit_s,
                 "Wall-clock seconds one compile may take")
      ->capture_default_str();
  app.add_option("--compile-memory-limit-mb", flags.compile_memory_limit_mb,
                 "Address-space limit of each compile process, in MiB")
      ->capture_default_str();
  app.add_option("--worker-binary", flags.worker_binary, "kbworker executable")
      ->capture_default_str();
  app.add_option("--runner-binary", flags.runner_binary, "kbrunner executable")
      ->capture_default_str();
  app.add_option("--port-file", port_file,
                 "Write the bound port to this file once listening");
  app.add_option("--http-listen", flags.http_listen,
                 "HTTP/JSON tools address:port (POST /v1/tools/NAME; port 0 "
                 "picks one), or off")
      ->capture_default_str();
  app.add_option("--http-port-file", http_port_file,
                 "Write the bound HTTP port to this file once listening");
  app.add_option("--http-allowed-host", flags.http_allowed_hosts,
                 "Also answer HTTP requests whose Host is NAME or NAME:PORT "
                 "(a reverse proxy's or LAN name; repeatable); others get "
                 "421")
      ->allow_extra_args(false);
  app.add_option("--http-allowed-origin", flags.http_allowed_origins,
                 "Also accept HTTP requests from web pages of this origin, "
                 "e.g. https://kb.example.com (repeatable); others get 403")
      ->allow_extra_args(false);
  app.add_option("--log-level", flags.log_level,
                 "trace, debug, info, warn, error")
      ->capture_default_str();
  app.add_option("--lease-ttl-ms", flags.lease_ttl_ms,
                 "A worker's lease is lost after this long without heartbeat")
      ->capture_default_str();
  app.add_option("--worker-token-file", flags.worker_token_file,
                 "File of the token workers must present (mode 0600, owned "
                 "by kbd's user); default DATA_DIR/worker.token, created on "
                 "first start");
  app.add_option("--holdout-secret-file", flags.holdout_secret_file,
                 "File of the secret that each submission's hidden cases are "
                 "drawn from (mode 0600, owned by kbd's user, at least 32 "
                 "characters); default DATA_DIR/holdout.secret, created on "
                 "first start");
  app.add_option("--no-worker-timeout-ms", flags.no_worker_timeout_ms,
                 "Queued GPU jobs fail after this long with no worker")
      ->capture_default_str();
  app.add_option("--retention-days", flags.retention_days,
                 "Delete finished jobs, session turns, sweeps, unused sources "
                 "and compile-cache entries older than this many days "
                 "(session summaries stay); 0 = no age limit")
      ->capture_default_str();
  app.add_option("--store-max-bytes", flags.store_max_bytes,
                 "Past this many bytes in use, delete the oldest of those "
                 "first, down to 90%; 0 = no size limit")
      ->capture_default_str();
  app.add_option("--compile-per-client", flags.compile_per_client,
                 "Most compiles of one session (or the session-less "
                 "callers) running at once; 0 = half the compile threads")
      ->capture_default_str();
  app.add_option("--timing-max-time-ms", flags.timing_max_time_ms,
                 "Time budget for sampling one submit's timing")
      ->capture_default_str()
      ->check(CLI::Range(1, 600000));
  app.add_option("--timing-min-samples", flags.timing_min_samples,
                 "Fewest timed samples of kernel and reference per submit "
                 "before the noise test may stop sampling")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--timing-max-rel-stderr", flags.timing_max_rel_stderr,
                 "Sampling stops once the relative standard error of the "
                 "median is at most this (0.005 = 0.5%)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--budget-scale", flags.budget_scale,
                 "Multiply every job's runner budget by this: for a kbd "
                 "whose runners run under a profiler such as Nsight Compute")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  app.add_option("--max-unfinished-jobs", flags.max_unfinished_jobs,
                 "Most jobs unfinished at once (queued, compiling, waiting "
                 "for or on a GPU); past it a submit is RESOURCE_EXHAUSTED")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  CLI11_PARSE(app, argc, argv);
  kbench::InitLogging("kbd", flags.log_level);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  kbench::Kbd kbd(flags);
  if (absl::Status s = kbd.Start(); !s.ok()) {
    spdlog::error("{}", std::string(s.message()));
    return 2;
  }
  if (!http_port_file.empty() && kbd.http_port() != 0) {
    std::ofstream(http_port_file) << kbd.http_port() << "\n";
  }
  // Written last: a port file means kbd serves everything it was asked to.
  if (!port_file.empty()) std::ofstream(port_file) << kbd.grpc_port() << "\n";
  const int sig = WaitForStopSignal();
  spdlog::info("signal {}: shutting down", sig);
  kbd.Stop();
  return 0;
}
