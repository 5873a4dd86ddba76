// kbd: the kbench server. Serves kbench.v1.Kbench (agent tools and jobs)
// and kbench.v1.WorkerService (for kbworker) over gRPC, with the health and
// reflection services, and over HTTP the agent tools (JSON), the dashboard's
// API (/api/...) and Prometheus metrics (/metrics); keeps jobs, sources,
// the compile cache and sessions in an embedded SQLite database under
// --data-dir; optionally starts one local kbworker per GPU.
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/synchronization/mutex.h"
#include "base/logging.h"
#include "base/metrics.h"
#include "base/paths.h"
#include "base/status_macros.h"
#include "compiler/nvrtc_compiler.h"
#include "compiler/sandbox/compile_sandbox.h"
#include "contract/problem_registry.h"
#include "contract/worker_auth.h"
#include "server/core/agent_service.h"
#include "server/core/compile_service.h"
#include "server/core/job_service.h"
#include "server/core/job_table.h"
#include "server/core/kbd_metrics.h"
#include "server/core/scheduler.h"
#include "server/core/worker_registry.h"
#include "server/grpc/kbench_grpc_service.h"
#include "server/grpc/worker_grpc_service.h"
#include "server/http/dashboard_api.h"
#include "server/http/http_server.h"
#include "server/http/local_tool_backend.h"
#include "server/http/metrics_route.h"
#include "server/http/web_assets.h"
#include "server/local_workers.h"
#include "server/store/retention.h"
#include "server/store/store.h"
#include "spdlog/spdlog.h"

namespace {

struct Flags {
  std::string listen = "127.0.0.1:50051";
  std::string data_dir = kbench::DefaultDataDir();
  std::string problems_dir;
  std::string local_worker = "off";
  int compile_threads = 0;
  bool compile_sandbox = true;
  bool trust_host_compiles = false;
  std::string kbcompile_binary = kbench::ExeDir() + "/kbcompile";
  int compile_cpu_limit_s = 20;
  int compile_wall_limit_s = 30;
  int compile_memory_limit_mb = 4096;
  std::string worker_binary = kbench::ExeDir() + "/kbworker";
  std::string runner_binary = kbench::ExeDir() + "/kbrunner";
  std::string port_file;
  std::string http_listen = "127.0.0.1:8080";
  std::string http_port_file;
  std::vector<std::string> http_allowed_hosts;
  std::vector<std::string> http_allowed_origins;
  std::string log_level = "info";
  int lease_ttl_ms = 10000;
  int no_worker_timeout_ms = 60000;
  std::string worker_token_file;  // Default: DATA_DIR/worker.token.
  int timing_max_time_ms = 1000;
  int retention_days = 30;
  int64_t store_max_bytes = int64_t{2} << 30;
  int compile_per_client = 0;
};

// Sets grpc.health.v1's status from `health` every 2 s until stopped (Stop,
// or the destructor on an early return), so gRPC clients see what /healthz
// says. Borrows the server, which must outlive it.
class GrpcHealthUpdater {
 public:
  GrpcHealthUpdater(grpc::Server* server, std::function<absl::Status()> health)
      : thread_([this, server, health = std::move(health)] {
          absl::MutexLock lock(&mu_);
          do {
            mu_.Unlock();
            server->GetHealthCheckService()->SetServingStatus(health().ok());
            mu_.Lock();
          } while (
              !mu_.AwaitWithTimeout(absl::Condition(&stop_), absl::Seconds(2)));
        }) {}
  ~GrpcHealthUpdater() { Stop(); }
  void Stop() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  absl::Mutex mu_;
  bool stop_ = false;
  std::thread thread_;
};

int Run(const Flags& flags) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(flags.data_dir, ec);
  if (ec) {
    spdlog::error("cannot create data directory {}: {}", flags.data_dir,
                  std::string(ec.message()));
    return 2;
  }
  // Workers must present this token (contract/worker_auth.h).
  const std::string token_file =
      flags.worker_token_file.empty()
          ? flags.data_dir + "/" + kbench::kWorkerTokenFileName
          : flags.worker_token_file;
  absl::StatusOr<std::string> worker_token =
      flags.worker_token_file.empty()
          ? kbench::LoadOrCreateWorkerTokenFile(token_file)
          : kbench::ReadWorkerTokenFile(token_file);
  if (!worker_token.ok()) {
    spdlog::error("worker token: {}",
                  std::string(worker_token.status().message()));
    return 2;
  }
  const kbench::WorkerAuthenticator worker_auth({*worker_token, token_file});
  spdlog::info("workers must present the token in {} (kbworker --token-file)",
               token_file);
  auto store = kbench::Store::Open({flags.data_dir + "/kbench.db"});
  if (!store.ok()) {
    spdlog::error("opening the store: {}",
                  std::string(store.status().message()));
    return 2;
  }
  const std::string problems_dir = flags.problems_dir.empty()
                                       ? kbench::ProblemRegistry::DefaultDir()
                                       : flags.problems_dir;
  auto problems = kbench::ProblemRegistry::LoadDir(problems_dir);
  if (!problems.ok()) {
    spdlog::error("loading problems: {}",
                  std::string(problems.status().message()));
    return 2;
  }
  absl::StatusOr<int> local =
      kbench::LocalWorkers::WorkerCount(flags.local_worker);
  if (!local.ok()) {
    spdlog::error("{}", std::string(local.status().message()));
    return 2;
  }

  kbench::NvrtcCompiler compiler;
  std::unique_ptr<kbench::CompileSandbox> sandbox;
  if (!flags.compile_sandbox && !flags.trust_host_compiles) {
    spdlog::error(
        "--compile-sandbox=false runs NVRTC inside kbd, unjailed, where a "
        "kernel source can #include any file kbd can read; add "
        "--trust-host-compiles if every client of this kbd is trusted");
    return 2;
  }
  if (flags.compile_sandbox) {
    kbench::CompileSandbox::Options sandbox_options;
    sandbox_options.kbcompile_path = flags.kbcompile_binary;
    sandbox_options.children = flags.compile_threads;
    sandbox_options.cpu_limit = absl::Seconds(flags.compile_cpu_limit_s);
    sandbox_options.wall_limit = absl::Seconds(flags.compile_wall_limit_s);
    sandbox_options.memory_limit_bytes = int64_t{flags.compile_memory_limit_mb}
                                         << 20;
    sandbox_options.compile_options = compiler.options();
    sandbox_options.allow_unjailed = flags.trust_host_compiles;
    sandbox = std::make_unique<kbench::CompileSandbox>(sandbox_options);
    if (absl::Status s = sandbox->Start(); !s.ok()) {
      spdlog::error("{}", std::string(s.message()));
      return 2;
    }
    if (sandbox->Health().ok()) {
      spdlog::info("compiles run in kbcompile children: {}", sandbox->jail());
    }
  }
  kbench::CompileService::Options compile_options;
  compile_options.threads = flags.compile_threads;
  compile_options.per_client_running = flags.compile_per_client;
  kbench::CompileService compile_service(compile_options, &compiler,
                                         store->get(), sandbox.get());
  kbench::WorkerRegistry workers({});
  kbench::JobTable jobs({}, store->get());
  // Before the job service, which counts finished jobs in it.
  kbench::Metrics metrics;
  kbench::JobService::Options job_options;
  job_options.worker_grace =
      *local > 0 ? absl::Seconds(30) : absl::ZeroDuration();
  job_options.timing_max_time_ms = flags.timing_max_time_ms;
  kbench::JobService job_service(job_options, store->get(), problems->get(),
                                 &compile_service, &workers, &jobs, &metrics);
  kbench::Scheduler::Options sched_options;
  sched_options.lease_ttl = absl::Milliseconds(flags.lease_ttl_ms);
  sched_options.no_worker_timeout =
      absl::Milliseconds(flags.no_worker_timeout_ms);
  kbench::Scheduler scheduler(
      sched_options, &jobs, &workers,
      [&job_service](const std::string& id, kbench::v1::JobResult result) {
        job_service.Finish(id, std::move(result));
      });
  job_service.set_scheduler(&scheduler);
  if (absl::Status s =
          kbench::RegisterKbdMetrics(&metrics, &scheduler, &workers, &jobs);
      !s.ok()) {
    spdlog::error("registering metrics: {}", std::string(s.message()));
    return 2;
  }
  if (absl::Status s = kbench::RegisterStoreMetrics(&metrics, store->get());
      !s.ok() ||
      !(s = kbench::RegisterCompileMetrics(&metrics, &compile_service)).ok()) {
    spdlog::error("registering metrics: {}", std::string(s.message()));
    return 2;
  }
  job_service.Recover();
  // After recovery (it never deletes unfinished jobs anyway); prunes on its
  // own thread at once, then every 10 minutes.
  kbench::Retention::Options retention_options;
  retention_options.policy.max_age =
      absl::Hours(24) * std::max(0, flags.retention_days);
  retention_options.policy.max_bytes =
      std::max<int64_t>(0, flags.store_max_bytes);
  kbench::Retention retention(retention_options, store->get());
  retention.Start();

  kbench::AgentService agent_service({}, store->get(), problems->get(), &jobs);
  kbench::KbenchGrpcService kbench_service(&job_service, &agent_service);
  kbench::WorkerGrpcService worker_service(&scheduler, &worker_auth);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(flags.listen, grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&kbench_service);
  builder.RegisterService(&worker_service);
  builder.SetMaxReceiveMessageSize(64 << 20);
  builder.SetMaxSendMessageSize(64 << 20);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    spdlog::error("cannot listen on {} (in use, or not an address:port)",
                  flags.listen);
    return 2;
  }
  // One answer to "can kbd serve?", for /healthz and grpc.health.v1: not
  // when compiles are refused for want of a jail, nor when the store cannot
  // be written (cached for 1 s).
  const std::function<absl::Status()> health =
      [store = store->get(), sandbox = sandbox.get()]() -> absl::Status {
    if (sandbox != nullptr) RETURN_IF_ERROR(sandbox->Health());
    return store->CheckWritable();
  };
  GrpcHealthUpdater grpc_health(server.get(), health);
  const std::string host = flags.listen.substr(0, flags.listen.rfind(':'));
  const std::string address = host + ":" + std::to_string(port);
  spdlog::info("kbd {} listening on {} (data {}, problems {}, NVRTC {})",
               KBENCH_VERSION, address, flags.data_dir, problems_dir,
               kbench::NvrtcCompiler::Version());

  // The agent tools over HTTP/JSON, on the same core as gRPC.
  kbench::HttpServer::Options http_options;
  http_options.listen = flags.http_listen;
  http_options.health = health;
  http_options.allowed_hosts = flags.http_allowed_hosts;
  http_options.allowed_origins = flags.http_allowed_origins;
  kbench::DashboardApi dashboard(&job_service, &agent_service, &workers,
                                 &scheduler);
  http_options.routes.push_back(
      [&dashboard](httplib::Server& s) { dashboard.Install(s); });
  http_options.routes.push_back([&metrics](httplib::Server& s) {
    kbench::InstallMetricsRoute(s, &metrics);
  });
  http_options.routes.push_back(kbench::InstallWebAssetRoutes);
  kbench::LocalToolBackend tool_backend(&job_service, &agent_service,
                                        http_options.job_timeout);
  kbench::HttpServer http(http_options, &tool_backend);
  if (flags.http_listen != "off") {
    absl::StatusOr<int> http_port = http.Start();
    if (!http_port.ok()) {
      spdlog::error("--http-listen: {} (--http-listen=off serves gRPC only)",
                    std::string(http_port.status().message()));
      server->Shutdown(std::chrono::system_clock::now());
      compile_service.Shutdown();
      return 2;
    }
    const std::string http_host =
        flags.http_listen.substr(0, flags.http_listen.rfind(':'));
    spdlog::info(
        "HTTP tools on http://{0}:{1}/v1/tools, dashboard API on "
        "http://{0}:{1}/api/, metrics on http://{0}:{1}/metrics",
        http_host, *http_port);
    if (!flags.http_port_file.empty()) {
      std::ofstream(flags.http_port_file) << *http_port << "\n";
    }
  } else {
    spdlog::info("HTTP tools off (--http-listen=off)");
  }
  // Written last: a port file means kbd serves everything it was asked to.
  if (!flags.port_file.empty()) {
    std::ofstream(flags.port_file) << port << "\n";
  }

  kbench::LocalWorkers::Options lw;
  lw.mode = flags.local_worker;
  lw.server_address =
      (host == "0.0.0.0" || host == "[::]" ? "127.0.0.1" : host) + ":" +
      std::to_string(port);
  lw.worker_binary = flags.worker_binary;
  lw.runner_binary = flags.runner_binary;
  lw.log_level = flags.log_level;
  lw.token_file = token_file;
  auto local_workers = std::make_unique<kbench::LocalWorkers>(lw);
  if (*local > 0) {
    spdlog::info("starting {} local worker(s)", *local);
  } else if (flags.local_worker == "auto") {
    spdlog::warn(
        "--local-worker=auto found no NVIDIA GPU; GPU tools will "
        "answer FAILED_PRECONDITION until a worker connects");
  }
  local_workers->Start(*local);

  // Wait for SIGINT or SIGTERM (blocked in every thread, taken here).
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  int sig = 0;
  sigwait(&set, &sig);
  spdlog::info("signal {}: shutting down", sig);
  grpc_health.Stop();
  // HTTP first: end the tool calls waiting for jobs, then stop serving.
  tool_backend.Shutdown();
  http.Stop();
  local_workers.reset();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  // Compiles still in flight report to the job service: stop them while it
  // is alive (it is destroyed before the compile service).
  compile_service.Shutdown();
  return 0;
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
  Flags flags;
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
  app.add_option("--port-file", flags.port_file,
                 "Write the bound port to this file once listening");
  app.add_option("--http-listen", flags.http_listen,
                 "HTTP/JSON tools address:port (POST /v1/tools/NAME; port 0 "
                 "picks one), or off")
      ->capture_default_str();
  app.add_option("--http-port-file", flags.http_port_file,
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
  app.add_option("--no-worker-timeout-ms", flags.no_worker_timeout_ms,
                 "Queued GPU jobs fail after this long with no worker")
      ->capture_default_str();
  app.add_option("--retention-days", flags.retention_days,
                 "Delete finished jobs, session turns, unused sources and "
                 "compile-cache entries older than this many days (session "
                 "summaries stay); 0 = no age limit")
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
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  kbench::InitLogging("kbd", flags.log_level);
  return Run(flags);
}
