#include "server/kbd.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/metrics.h"
#include "base/paths.h"
#include "base/status_macros.h"
#include "compiler/nvrtc_compiler.h"
#include "compiler/sandbox/compile_sandbox.h"
#include "contract/problem_registry.h"
#include "contract/worker_auth.h"
#include "server/core/compile_service.h"
#include "server/core/core.h"
#include "server/core/holdout_keys.h"
#include "server/core/kbd_metrics.h"
#include "server/core/problem_kernels_check.h"
#include "server/grpc/grpc_health_updater.h"
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

namespace kbench {

// In construction order; destroyed in reverse, after Stop.
struct Kbd::Parts {
  std::string token_file;
  std::unique_ptr<WorkerAuthenticator> worker_auth;
  std::unique_ptr<HoldoutKeys> holdout_keys;
  std::unique_ptr<Store> store;
  std::unique_ptr<ProblemRegistry> problems;
  std::string problems_dir;
  int local_workers = 0;
  NvrtcCompiler compiler;
  std::unique_ptr<CompileSandbox> sandbox;
  Metrics metrics;
  std::unique_ptr<CompileService> compile_service;
  std::unique_ptr<Core> core;
  std::unique_ptr<Retention> retention;
  std::unique_ptr<KbenchGrpcService> kbench_grpc;
  std::unique_ptr<WorkerGrpcService> worker_grpc;
  std::unique_ptr<grpc::Server> grpc_server;
  std::unique_ptr<GrpcHealthUpdater> grpc_health;
  std::string address;
  int grpc_port = 0;
  std::unique_ptr<DashboardApi> dashboard;
  std::unique_ptr<LocalToolBackend> tool_backend;
  std::unique_ptr<HttpServer> http;
  int http_port = 0;
  std::unique_ptr<LocalWorkers> local;
  bool stopped = false;
};

namespace {

std::string OrBeside(const std::string& path, const char* name) {
  return path.empty() ? ExeDir() + "/" + name : path;
}

std::string HostOf(const std::string& address) {
  return address.substr(0, address.rfind(':'));
}

}  // namespace

Kbd::Kbd(const Options& options) : options_(options) {}

Kbd::~Kbd() { Stop(); }

absl::Status Kbd::Start() {
  if (parts_ != nullptr) return absl::FailedPreconditionError("kbd started");
  auto p = std::make_unique<Parts>();
  const Options& o = options_;
  const std::string data_dir =
      o.data_dir.empty() ? DefaultDataDir() : o.data_dir;
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot create data directory ", data_dir, ": ", ec.message()));
  }
  // Workers must present this token (contract/worker_auth.h).
  p->token_file = o.worker_token_file.empty()
                      ? data_dir + "/" + kWorkerTokenFileName
                      : o.worker_token_file;
  absl::StatusOr<std::string> token =
      o.worker_token_file.empty() ? LoadOrCreateWorkerTokenFile(p->token_file)
                                  : ReadWorkerTokenFile(p->token_file);
  if (!token.ok()) {
    return absl::Status(
        token.status().code(),
        absl::StrCat("worker token: ", token.status().message()));
  }
  p->worker_auth = std::make_unique<WorkerAuthenticator>(
      WorkerAuthenticator::Options{*token, p->token_file});
  spdlog::info("workers must present the token in {} (kbworker --token-file)",
               p->token_file);
  // Each submission's hidden cases are drawn from this secret.
  absl::StatusOr<std::unique_ptr<HoldoutKeys>> keys =
      HoldoutKeys::Load({o.holdout_secret_file, data_dir});
  if (!keys.ok()) {
    return absl::Status(
        keys.status().code(),
        absl::StrCat("holdout secret: ", keys.status().message()));
  }
  p->holdout_keys = *std::move(keys);
  spdlog::info("hidden cases are drawn from the secret in {}",
               p->holdout_keys->where());
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::Open({data_dir + "/kbench.db"});
  if (!store.ok()) {
    return absl::Status(
        store.status().code(),
        absl::StrCat("opening the store: ", store.status().message()));
  }
  p->store = *std::move(store);
  ASSIGN_OR_RETURN(p->local_workers, LocalWorkers::WorkerCount(o.local_worker));

  if (!o.compile_sandbox && !o.trust_host_compiles) {
    return absl::InvalidArgumentError(
        "--compile-sandbox=false runs NVRTC inside kbd, unjailed, where a "
        "kernel source can #include any file kbd can read; add "
        "--trust-host-compiles if every client of this kbd is trusted");
  }
  if (o.compile_sandbox) {
    CompileSandbox::Options so;
    so.kbcompile_path = OrBeside(o.kbcompile_binary, "kbcompile");
    so.children = o.compile_threads;
    so.cpu_limit = absl::Seconds(o.compile_cpu_limit_s);
    so.wall_limit = absl::Seconds(o.compile_wall_limit_s);
    so.memory_limit_bytes = int64_t{o.compile_memory_limit_mb} << 20;
    so.compile_options = p->compiler.options();
    so.allow_unjailed = o.trust_host_compiles;
    p->sandbox = std::make_unique<CompileSandbox>(so);
    RETURN_IF_ERROR(p->sandbox->Start());
    if (p->sandbox->Health().ok()) {
      spdlog::info("compiles run in kbcompile children: {}",
                   p->sandbox->jail());
    }
  }
  CompileService::Options co;
  co.threads = o.compile_threads;
  co.per_client_running = o.compile_per_client;
  p->compile_service = std::make_unique<CompileService>(
      co, &p->compiler, p->store.get(), p->sandbox.get());
  // Problems load after the compiler starts: each one's golden, baseline
  // and example kernels must compile, or the problem is refused (the others
  // load).
  p->problems_dir =
      o.problems_dir.empty() ? ProblemRegistry::DefaultDir() : o.problems_dir;
  Core::Options core;
  ProblemRegistry::Options po;
  po.only.insert(o.problems.begin(), o.problems.end());
  bool compiler_down = false;  // Read only during LoadDir, below.
  po.check = [compiles = p->compile_service.get(),
              &arch = core.job_service.default_arch,
              &compiler_down](const v1::Problem& problem) -> absl::Status {
    if (compiler_down) return absl::OkStatus();
    absl::Status status = CheckProblemKernels(compiles, arch, problem);
    if (status.ok() || status.code() == absl::StatusCode::kInvalidArgument ||
        status.code() == absl::StatusCode::kResourceExhausted) {
      return status;
    }
    // Not the kernels' fault (no working compiler now): kbd serves this
    // problem and the rest unchecked, and their jobs report the compiler's
    // state; the rest are not tried (each would wait for its own failure).
    compiler_down = true;
    spdlog::warn("problems from {} on: kernels not checked: {}", problem.name(),
                 std::string(status.message()));
    return absl::OkStatus();
  };
  absl::StatusOr<std::unique_ptr<ProblemRegistry>> problems =
      ProblemRegistry::LoadDir(p->problems_dir, po);
  if (!problems.ok()) {
    p->compile_service->Shutdown();
    return absl::Status(
        problems.status().code(),
        absl::StrCat("loading problems: ", problems.status().message()));
  }
  p->problems = *std::move(problems);
  for (const ProblemRegistry::Refused& refused : p->problems->refused()) {
    spdlog::warn("problem refused: {}", refused.error);
  }
  core.scheduler.lease_ttl = absl::Milliseconds(o.lease_ttl_ms);
  core.scheduler.no_worker_timeout = absl::Milliseconds(o.no_worker_timeout_ms);
  core.job_service.worker_grace =
      p->local_workers > 0 ? absl::Seconds(30) : absl::ZeroDuration();
  core.job_service.timing_max_time_ms = o.timing_max_time_ms;
  core.job_service.timing_min_samples = o.timing_min_samples;
  core.job_service.timing_max_rel_stderr = o.timing_max_rel_stderr;
  core.job_service.budget_scale = o.budget_scale;
  core.job_service.max_unfinished_jobs = o.max_unfinished_jobs;
  p->core = std::make_unique<Core>(
      core,
      Core::Deps{p->store.get(), p->problems.get(), p->compile_service.get(),
                 &p->metrics, p->holdout_keys.get()});
  Core& c = *p->core;
  RETURN_IF_ERROR(
      RegisterKbdMetrics(&p->metrics, c.scheduler(), c.workers(), c.jobs()));
  RETURN_IF_ERROR(RegisterStoreMetrics(&p->metrics, p->store.get()));
  RETURN_IF_ERROR(
      RegisterCompileMetrics(&p->metrics, p->compile_service.get()));
  c.job_service()->Recover();
  // After recovery (it never deletes unfinished jobs anyway); prunes on its
  // own thread at once, then every 10 minutes.
  Retention::Options ro;
  ro.policy.max_age = absl::Hours(24) * std::max(0, o.retention_days);
  ro.policy.max_bytes = std::max<int64_t>(0, o.store_max_bytes);
  p->retention = std::make_unique<Retention>(ro, p->store.get());
  p->retention->Start();

  // gRPC.
  p->kbench_grpc = std::make_unique<KbenchGrpcService>(
      c.job_service(), c.sweep_service(), c.agent_service());
  p->worker_grpc =
      std::make_unique<WorkerGrpcService>(c.scheduler(), p->worker_auth.get());
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(o.listen, grpc::InsecureServerCredentials(),
                           &p->grpc_port);
  builder.RegisterService(p->kbench_grpc.get());
  builder.RegisterService(p->worker_grpc.get());
  builder.SetMaxReceiveMessageSize(64 << 20);
  builder.SetMaxSendMessageSize(64 << 20);
  p->grpc_server = builder.BuildAndStart();
  if (p->grpc_server == nullptr || p->grpc_port == 0) {
    p->compile_service->Shutdown();
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", o.listen, " (in use, or not an address:port)"));
  }
  // One answer to "can kbd serve?", for /healthz and grpc.health.v1: not
  // when compiles are refused for want of a jail, nor when the store cannot
  // be written (cached for 1 s).
  const std::function<absl::Status()> health =
      [store = p->store.get(), sandbox = p->sandbox.get()]() -> absl::Status {
    if (sandbox != nullptr) RETURN_IF_ERROR(sandbox->Health());
    return store->CheckWritable();
  };
  p->grpc_health =
      std::make_unique<GrpcHealthUpdater>(p->grpc_server.get(), health);
  const std::string host = HostOf(o.listen);
  p->address = absl::StrCat(host, ":", p->grpc_port);
  spdlog::info("kbd {} listening on {} (data {}, problems {}, NVRTC {})",
               KBENCH_VERSION, p->address, data_dir, p->problems_dir,
               NvrtcCompiler::Version());

  // The agent tools over HTTP/JSON, on the same core as gRPC.
  HttpServer::Options ho;
  ho.listen = o.http_listen;
  ho.health = health;
  ho.allowed_hosts = o.http_allowed_hosts;
  ho.allowed_origins = o.http_allowed_origins;
  p->dashboard = std::make_unique<DashboardApi>(
      c.job_service(), c.sweep_service(), c.agent_service(), c.workers(),
      c.scheduler());
  ho.routes.push_back([dashboard = p->dashboard.get()](httplib::Server& s) {
    dashboard->Install(s);
  });
  ho.routes.push_back([metrics = &p->metrics](httplib::Server& s) {
    InstallMetricsRoute(s, metrics);
  });
  ho.routes.push_back(InstallWebAssetRoutes);
  p->tool_backend = std::make_unique<LocalToolBackend>(
      c.job_service(), c.agent_service(), ho.job_timeout);
  p->http = std::make_unique<HttpServer>(ho, p->tool_backend.get());
  if (o.http_listen != "off") {
    absl::StatusOr<int> http_port = p->http->Start();
    if (!http_port.ok()) {
      p->grpc_health->Stop();
      p->grpc_server->Shutdown(std::chrono::system_clock::now());
      p->compile_service->Shutdown();
      return absl::Status(
          http_port.status().code(),
          absl::StrCat("--http-listen: ", http_port.status().message(),
                       " (--http-listen=off serves gRPC only)"));
    }
    p->http_port = *http_port;
    spdlog::info(
        "HTTP tools on http://{0}:{1}/v1/tools, dashboard API on "
        "http://{0}:{1}/api/, metrics on http://{0}:{1}/metrics",
        HostOf(o.http_listen), p->http_port);
  } else {
    spdlog::info("HTTP tools off (--http-listen=off)");
  }

  LocalWorkers::Options lw;
  lw.mode = o.local_worker;
  lw.server_address =
      absl::StrCat(host == "0.0.0.0" || host == "[::]" ? "127.0.0.1" : host,
                   ":", p->grpc_port);
  lw.worker_binary = OrBeside(o.worker_binary, "kbworker");
  lw.runner_binary = OrBeside(o.runner_binary, "kbrunner");
  lw.log_level = o.log_level;
  lw.token_file = p->token_file;
  p->local = std::make_unique<LocalWorkers>(lw);
  if (p->local_workers > 0) {
    spdlog::info("starting {} local worker(s)", p->local_workers);
  } else if (o.local_worker == "auto") {
    spdlog::warn(
        "--local-worker=auto found no NVIDIA GPU; GPU tools will "
        "answer FAILED_PRECONDITION until a worker connects");
  }
  p->local->Start(p->local_workers);
  parts_ = std::move(p);
  return absl::OkStatus();
}

void Kbd::Stop() {
  if (parts_ == nullptr || parts_->stopped) return;
  Parts& p = *parts_;
  p.stopped = true;
  p.grpc_health->Stop();
  // HTTP first: end the tool calls waiting for jobs, then stop serving.
  p.tool_backend->Shutdown();
  p.http->Stop();
  p.local.reset();
  p.grpc_server->Shutdown(std::chrono::system_clock::now() +
                          std::chrono::seconds(2));
  // Compiles still in flight report to the job service: stop them while it
  // is alive (it is destroyed before the compile service).
  p.compile_service->Shutdown();
}

std::string Kbd::address() const { return parts_ ? parts_->address : ""; }
int Kbd::grpc_port() const { return parts_ ? parts_->grpc_port : 0; }
int Kbd::http_port() const { return parts_ ? parts_->http_port : 0; }
const std::string& Kbd::worker_token_file() const {
  static const std::string kNone;
  return parts_ ? parts_->token_file : kNone;
}

}  // namespace kbench
