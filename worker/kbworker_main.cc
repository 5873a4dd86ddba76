// kbworker: one per GPU. Leases jobs from kbd over gRPC (the same path for
// local and remote hosts) and runs each in a child kbrunner.
#include <signal.h>

#include <thread>

#include "CLI/CLI.hpp"
#include "common/logging.h"
#include "common/paths.h"
#include "spdlog/spdlog.h"
#include "worker/worker_loop.h"

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  CLI::App app{"kbworker: runs kbench jobs on one GPU, leased from kbd"};
  kbench::WorkerLoop::Options options;
  options.runner = kbench::ExeDir() + "/kbrunner";
  std::string log_level = "info";
  int lease_wait_ms = 20000;
  app.set_config("--config", "", "Read options from this file (key = value)");
  app.add_option("--server", options.server, "kbd's gRPC address")
      ->capture_default_str();
  app.add_option("--gpu", options.gpu, "GPU index on this host")
      ->capture_default_str();
  app.add_option("--runner", options.runner, "kbrunner executable")
      ->capture_default_str();
  app.add_option("--worker-id", options.worker_id,
                 "Id reported to kbd (default <hostname>:gpu<N>)");
  app.add_option("--compute-sanitizer", options.compute_sanitizer,
                 "compute-sanitizer for sanitize jobs (default: "
                 "$CUDA_HOME/bin, /usr/local/cuda/bin, $PATH)");
  app.add_option("--save-jobs", options.save_jobs_dir,
                 "Also write each leased job to DIR/<job id>.pb (replay: "
                 "kbrunner --oneshot DIR/<id>.pb out.pb, e.g. under ncu)");
  app.add_option("--lease-wait-ms", lease_wait_ms, "Long-poll length")
      ->capture_default_str();
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  kbench::InitLogging("kbworker", log_level);
  options.lease_wait = absl::Milliseconds(lease_wait_ms);
  options.runner_args = {"--log-level", log_level};

  kbench::WorkerLoop loop(options);
  // SIGINT/SIGTERM end the worker at once. A job in hand is re-queued by kbd
  // when its lease expires; the runner dies with its parent (PDEATHSIG).
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread signals([&] {
    int sig = 0;
    sigwait(&set, &sig);
    spdlog::info("signal {}: stopping", sig);
    loop.Stop();
    _exit(0);
  });
  signals.detach();
  const absl::Status s = loop.Run();
  if (!s.ok()) {
    spdlog::error("{}", std::string(s.message()));
    return 3;
  }
  return 0;
}
