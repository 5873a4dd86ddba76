// kbworker: one per GPU. Leases jobs from kbd over gRPC (the same path for
// local and remote hosts) and runs each in a child kbrunner. It presents
// kbd's worker token, read from --token-file, $KBENCH_WORKER_TOKEN_FILE or
// $KBENCH_WORKER_TOKEN (contract/worker_auth.h).
#include <signal.h>

#include <cstdlib>
#include <thread>

#include "CLI/CLI.hpp"
#include "base/logging.h"
#include "base/paths.h"
#include "base/untrusted_input.h"
#include "contract/worker_auth.h"
#include "spdlog/spdlog.h"
#include "worker/host_id.h"
#include "worker/worker_loop.h"

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  CLI::App app{"kbworker: runs kbench jobs on one GPU, leased from kbd"};
  kbench::WorkerLoop::Options options;
  options.runner = kbench::ExeDir() + "/kbrunner";
  std::string log_level = "info";
  int lease_wait_ms = 20000;
  std::string token_file;
  app.set_config("--config", "", "Read options from this file (key = value)");
  app.add_option("--server", options.server, "kbd's gRPC address")
      ->capture_default_str();
  app.add_option("--gpu", options.gpu, "GPU index on this host")
      ->capture_default_str();
  app.add_option("--runner", options.runner, "kbrunner executable")
      ->capture_default_str();
  app.add_option("--token-file", token_file,
                 "File holding kbd's worker token (kbd writes it to "
                 "DATA_DIR/worker.token; mode 0600, owned by this user). "
                 "Default: $KBENCH_WORKER_TOKEN_FILE, else the token in "
                 "$KBENCH_WORKER_TOKEN");
  app.add_option("--worker-id", options.worker_id,
                 "Id reported to kbd (default <hostname>:gpu<N>)");
  app.add_option("--host-id", options.host_id,
                 "Id of this host reported to kbd, the same for all its "
                 "workers (default: derived from /etc/machine-id; pass one "
                 "in a container without the host's machine id)");
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
  if (absl::Status s =
          kbench::ValidateSessionId(options.host_id, "--host-id", "");
      !s.ok()) {
    spdlog::error("{}", std::string(s.message()));
    return 2;
  }
  if (options.host_id.empty()) {
    options.host_id =
        kbench::HostIdFromMachineId(kbench::DefaultMachineIdFiles());
    if (options.host_id.empty()) {
      spdlog::warn(
          "no machine id in /etc/machine-id or /var/lib/dbus/machine-id: this "
          "worker reports no host id, so kbd cannot tell which GPUs share its "
          "host; pass --host-id (the same for every worker of this host)");
    }
  }
  absl::StatusOr<std::string> token = kbench::ResolveWorkerToken(token_file);
  if (!token.ok()) {
    spdlog::error("{}", std::string(token.status().message()));
    return 2;
  }
  options.token = *std::move(token);
  // The runners (which run untrusted kernels) need no token: keep it out of
  // their environment. No thread runs yet, so unsetenv is safe.
  unsetenv(kbench::kWorkerTokenEnv);
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
