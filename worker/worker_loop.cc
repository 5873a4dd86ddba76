#include "worker/worker_loop.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "base/grpc/grpc_status.h"
#include "base/random_id.h"
#include "contract/worker_auth.h"
#include "spdlog/spdlog.h"
#include "worker/sanitizer_runner.h"
#include "worker/topology_probe.h"

namespace kbench {
namespace {

std::string Hostname() {
  char buf[256] = {0};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

// The runner sees one GPU: the worker's, as device 0.
std::string VisibleDevice(int gpu) {
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v && *v) {
    std::vector<std::string> ids = absl::StrSplit(v, ',');
    if (gpu >= 0 && gpu < static_cast<int>(ids.size())) return ids[gpu];
  }
  return std::to_string(gpu);
}

}  // namespace

WorkerLoop::WorkerLoop(const Options& options) : options_(options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  stub_ = v1::WorkerService::NewStub(grpc::CreateCustomChannel(
      options_.server, grpc::InsecureChannelCredentials(), args));
  info_.set_hostname(Hostname());
  info_.set_host_id(options_.host_id);
  info_.set_gpu_index(options_.gpu);
  info_.set_worker_id(options_.worker_id.empty()
                          ? absl::StrCat(info_.hostname(), ":gpu", options_.gpu)
                          : options_.worker_id);
  info_.set_version(KBENCH_VERSION);
  // Tells kbd this process from another one under the same worker id.
  info_.set_instance_id(NewRandomId("i-"));
}

std::unique_ptr<grpc::ClientContext> WorkerLoop::Context(
    absl::Duration timeout) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->AddMetadata(kAuthorizationKey,
                   absl::StrCat(kBearerPrefix, options_.token));
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  return ctx;
}

RunnerProcess::Options WorkerLoop::RunnerOptions(
    const std::string& devices) const {
  RunnerProcess::Options ro;
  ro.runner_path = options_.runner;
  ro.args = options_.runner_args;
  ro.env["CUDA_VISIBLE_DEVICES"] = devices;
  return ro;
}

absl::Status WorkerLoop::EnsureRunner() {
  if (runner_ && runner_->alive()) return absl::OkStatus();
  runner_.reset();
  absl::StatusOr<std::unique_ptr<RunnerProcess>> r =
      RunnerProcess::Start(RunnerOptions(VisibleDevice(options_.gpu)));
  if (!r.ok()) return r.status();
  runner_ = std::move(*r);
  *info_.mutable_spec() = runner_->hello().spec();  // RunnerProcess logs it.
  return absl::OkStatus();
}

absl::Status WorkerLoop::Run() {
  int failures = 0;
  spdlog::info("worker {} (instance {}) serving GPU {} for {}",
               info_.worker_id(), info_.instance_id(), options_.gpu,
               options_.server);
  TopologyProbeOptions probe;
  probe.runner = options_.runner;
  probe.gpu = options_.gpu;
  if (absl::StatusOr<v1::RunnerTopology> topology = ProbeTopology(probe);
      topology.ok()) {
    *info_.mutable_links() = topology->links();
    int peers = 0;
    for (const v1::GpuLink& l : topology->links()) peers += l.peer_access();
    spdlog::info("GPU {} reaches {} of the host's {} other GPUs", options_.gpu,
                 peers, topology->links_size());
  } else {
    spdlog::warn(
        "measuring the links to the host's other GPUs: {}; this GPU "
        "joins no multi-GPU job",
        std::string(topology.status().message()));
  }
  while (!stopping_) {
    if (absl::Status s = EnsureRunner(); !s.ok()) {
      ++failures;
      spdlog::error("starting the runner ({}/{}): {}", failures,
                    options_.max_runner_failures, std::string(s.message()));
      if (failures >= options_.max_runner_failures) {
        return absl::FailedPreconditionError(
            absl::StrCat("the runner could not start ", failures,
                         " times in a row; last: ", s.message()));
      }
      absl::SleepFor(absl::Seconds(failures));
      continue;
    }
    failures = 0;
    v1::LeaseJobRequest request;
    *request.mutable_worker() = info_;
    request.set_wait_ms(
        static_cast<int>(absl::ToInt64Milliseconds(options_.lease_wait)));
    v1::LeaseJobResponse lease;
    std::unique_ptr<grpc::ClientContext> ctx =
        Context(options_.lease_wait + absl::Seconds(10));
    const grpc::Status s = stub_->LeaseJob(ctx.get(), request, &lease);
    if (!s.ok()) {
      const absl::Status st = FromGrpcStatus(s);
      if (absl::IsUnauthenticated(st) || absl::IsPermissionDenied(st) ||
          absl::IsInvalidArgument(st)) {
        // The token or this worker's facts: the same request cannot pass.
        return absl::Status(
            st.code(), absl::StrCat("kbd refused this worker: ", st.message()));
      }
      spdlog::warn("LeaseJob: {} ({}); retrying", s.error_message(),
                   static_cast<int>(s.error_code()));
      // FailedPrecondition (the id is bound to another GPU) and
      // AlreadyExists (a newer process holds the id) clear only when the
      // other registration expires: no need to ask every second.
      absl::SleepFor(absl::IsFailedPrecondition(st) || absl::IsAlreadyExists(st)
                         ? absl::Seconds(5)
                         : absl::Seconds(1));
      continue;
    }
    if (lease.lease_id().empty()) continue;  // The long-poll ran out.
    if (lease.gang().parked()) {
      Park(lease);
      continue;
    }
    spdlog::info("leased job {} (attempt {})", lease.job().job_id(),
                 lease.attempt());
    if (!options_.save_jobs_dir.empty()) {
      const std::string path = absl::StrCat(options_.save_jobs_dir, "/",
                                            lease.job().job_id(), ".pb");
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      if (!out || !lease.job().SerializeToOstream(&out)) {
        spdlog::warn("could not save job {} to {}", lease.job().job_id(), path);
      }
    }
    v1::JobResult result = Execute(lease);
    if (result.verdict() == v1::VERDICT_UNSPECIFIED) continue;  // Lost lease.
    Complete(lease.lease_id(), result);
  }
  return absl::OkStatus();
}

void WorkerLoop::Park(const v1::LeaseJobResponse& lease) {
  spdlog::info("parked in the gang of job {} (lease {}, {} GPUs)",
               lease.job().job_id(), lease.lease_id(),
               lease.gang().members_size());
  // kbd drops the lease after its TTL without a heartbeat; past twice that
  // without an answer it is surely gone, so stop waiting on it.
  const absl::Duration give_up =
      2 *
      std::max(absl::Milliseconds(lease.lease_ttl_ms()), options_.heartbeat);
  absl::Time answered = absl::Now();
  while (!stopping_) {
    v1::HeartbeatRequest hb;
    hb.set_worker_id(info_.worker_id());
    hb.set_lease_id(lease.lease_id());
    v1::HeartbeatResponse reply;
    std::unique_ptr<grpc::ClientContext> ctx = Context(absl::Seconds(5));
    if (stub_->Heartbeat(ctx.get(), hb, &reply).ok()) {
      if (!reply.lease_valid()) break;  // The gang's job ended.
      answered = absl::Now();
    } else if (absl::Now() - answered > give_up) {
      spdlog::warn("kbd did not answer heartbeats for lease {} for {}",
                   lease.lease_id(), absl::FormatDuration(give_up));
      break;
    }
    absl::SleepFor(options_.heartbeat);
  }
  spdlog::info("gang lease {} ended", lease.lease_id());
}

absl::StatusOr<std::string> WorkerLoop::RunnerDevices(
    const v1::LeaseJobResponse& lease) const {
  const int world = lease.job().world_size();
  if (world <= 1) return VisibleDevice(options_.gpu);
  const auto& members = lease.gang().members();
  if (members.size() != world) {
    return absl::InternalError(
        absl::StrCat("kbd leased job ", lease.job().job_id(), " for ", world,
                     " GPUs with a gang of ", members.size()));
  }
  if (members[0].worker_id() != info_.worker_id() ||
      members[0].gpu_index() != options_.gpu) {
    return absl::InternalError(absl::StrCat(
        "kbd gave job ", lease.job().job_id(), " to worker ", info_.worker_id(),
        ", but its gang's rank 0 is ", members[0].worker_id(), " (GPU ",
        members[0].gpu_index(), ")"));
  }
  std::set<int> seen;
  std::vector<std::string> ids;
  for (const v1::GangMember& m : members) {
    if (!seen.insert(m.gpu_index()).second) {
      return absl::InternalError(absl::StrCat("job ", lease.job().job_id(),
                                              "'s gang names GPU ",
                                              m.gpu_index(), " twice"));
    }
    ids.push_back(VisibleDevice(m.gpu_index()));
  }
  return absl::StrJoin(ids, ",");
}

v1::JobResult WorkerLoop::Execute(const v1::LeaseJobResponse& lease) {
  const absl::StatusOr<std::string> devices = RunnerDevices(lease);
  if (!devices.ok()) {
    v1::JobResult result;
    result.set_verdict(v1::VERDICT_ERROR);
    result.mutable_error()->set_code(static_cast<int>(devices.status().code()));
    result.mutable_error()->set_message(
        std::string(devices.status().message()));
    result.set_message(result.error().message());
    *result.mutable_gpu() = info_.spec();
    return result;
  }
  const bool gang = lease.job().world_size() > 1;
  std::atomic<bool> cancel{false}, lost{false};
  absl::Mutex mu;
  bool done = false;  // Guarded by mu; wakes the heartbeat thread at once.
  std::string detail;
  std::thread heartbeats([&] {
    absl::MutexLock lock(&mu);
    while (!done) {
      v1::HeartbeatRequest hb;
      hb.set_worker_id(info_.worker_id());
      hb.set_lease_id(lease.lease_id());
      hb.set_stage_detail(detail);
      mu.Unlock();
      v1::HeartbeatResponse reply;
      std::unique_ptr<grpc::ClientContext> ctx = Context(absl::Seconds(5));
      if (stub_->Heartbeat(ctx.get(), hb, &reply).ok()) {
        if (reply.cancel()) cancel = true;
        if (!reply.lease_valid()) {
          lost = true;
          cancel = true;
        }
      }
      mu.Lock();
      mu.AwaitWithTimeout(absl::Condition(&done), options_.heartbeat);
    }
  });
  const absl::Duration budget =
      absl::Milliseconds(lease.job().budget_ms()) + options_.budget_grace;
  auto progress = [&](const std::string& d) {
    absl::MutexLock lock(&mu);
    detail = d;
  };
  if (lease.job().kind() == v1::JOB_KIND_SANITIZE) {
    v1::JobResult result = Sanitize(lease.job(), *devices, progress, &cancel);
    {
      absl::MutexLock lock(&mu);
      done = true;
    }
    heartbeats.join();
    if (lost) {
      spdlog::warn("lease {} was lost; dropping job {}", lease.lease_id(),
                   lease.job().job_id());
      return v1::JobResult();
    }
    if (!result.has_gpu()) *result.mutable_gpu() = info_.spec();
    return result;
  }
  // A gang's job runs in a runner of its own that sees every member's GPU,
  // rank r as its device r; it is started under the heartbeats (its start
  // counts against no budget) and stopped after the job.
  std::unique_ptr<RunnerProcess> gang_runner;
  absl::Status started;
  if (gang) {
    progress(absl::StrCat("starting a runner on GPUs ", *devices));
    absl::StatusOr<std::unique_ptr<RunnerProcess>> r =
        RunnerProcess::Start(RunnerOptions(*devices));
    if (r.ok()) {
      gang_runner = std::move(*r);
    } else {
      started = r.status();
    }
  }
  RunnerProcess::Outcome out;
  if (started.ok()) {
    RunnerProcess* runner = gang ? gang_runner.get() : runner_.get();
    out = runner->Run(lease.job(), budget, progress, &cancel);
  }
  {
    absl::MutexLock lock(&mu);
    done = true;
  }
  heartbeats.join();

  v1::JobResult result;
  if (!started.ok()) {
    if (lost) return v1::JobResult();
    result.set_verdict(v1::VERDICT_ERROR);
    result.mutable_error()->set_code(
        static_cast<int>(absl::StatusCode::kUnavailable));
    result.mutable_error()->set_message(absl::StrCat(
        "the runner of job ", lease.job().job_id(), " did not start on GPUs ",
        *devices, ": ", started.message()));
    result.set_message(result.error().message());
    *result.mutable_gpu() = info_.spec();
    return result;
  }
  const std::string last =
      out.last_progress.empty()
          ? ""
          : absl::StrCat(" (last: ", out.last_progress, ")");
  switch (out.kind) {
    case RunnerProcess::Outcome::Kind::kResult:
      result = std::move(out.result);
      break;
    case RunnerProcess::Outcome::Kind::kTimedOut:
      result.set_verdict(v1::VERDICT_TIMED_OUT);
      result.set_message(absl::StrCat(
          "the kernel ran past the job's budget of ",
          absl::FormatDuration(absl::Milliseconds(lease.job().budget_ms())),
          " and its runner was killed", last));
      break;
    case RunnerProcess::Outcome::Kind::kDied:
      result.set_verdict(v1::VERDICT_CRASHED);
      result.set_message(
          absl::StrCat("the runner process died: ", out.detail, last));
      break;
    case RunnerProcess::Outcome::Kind::kCancelled:
      if (lost) {
        spdlog::warn("lease {} was lost; dropping job {}", lease.lease_id(),
                     lease.job().job_id());
        return v1::JobResult();
      }
      result.set_verdict(v1::VERDICT_CANCELLED);
      result.set_message("cancelled by a caller; the run was stopped");
      break;
    case RunnerProcess::Outcome::Kind::kProtocolError:
      result.set_verdict(v1::VERDICT_ERROR);
      result.mutable_error()->set_code(
          static_cast<int>(absl::StatusCode::kInternal));
      result.mutable_error()->set_message(
          absl::StrCat("runner protocol error: ", out.detail));
      result.set_message(result.error().message());
      break;
  }
  if (!out.output.empty()) {
    result.set_log(absl::StrCat(result.log(), result.log().empty() ? "" : "\n",
                                "kernel stdout (printf):\n", out.output));
  }
  if (!gang &&
      (out.kind != RunnerProcess::Outcome::Kind::kResult || out.unhealthy)) {
    spdlog::warn("replacing the runner after job {}: {}", lease.job().job_id(),
                 std::string(result.message()));
    runner_.reset();
  }
  if (!result.has_gpu()) *result.mutable_gpu() = info_.spec();
  return result;
}

v1::JobResult WorkerLoop::Sanitize(
    const v1::RunnerJob& job, const std::string& devices,
    const std::function<void(const std::string&)>& progress,
    const std::atomic<bool>* cancel) {
  SanitizerRunner::Options so;
  so.sanitizer_path = options_.compute_sanitizer;
  so.runner_path = options_.runner;
  so.runner_args = options_.runner_args;
  so.env["CUDA_VISIBLE_DEVICES"] = devices;
  so.worker_id = info_.worker_id();
  SanitizerRunner sanitizer(so);
  return sanitizer.Run(job, progress, cancel);
}

void WorkerLoop::Complete(const std::string& lease_id,
                          const v1::JobResult& result) {
  v1::CompleteJobRequest request;
  request.set_worker_id(info_.worker_id());
  request.set_lease_id(lease_id);
  *request.mutable_result() = result;
  for (int attempt = 1; attempt <= 10 && !stopping_; ++attempt) {
    v1::CompleteJobResponse response;
    std::unique_ptr<grpc::ClientContext> ctx = Context(absl::Seconds(10));
    const grpc::Status s = stub_->CompleteJob(ctx.get(), request, &response);
    if (s.ok()) return;
    if (s.error_code() != grpc::StatusCode::UNAVAILABLE &&
        s.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
      spdlog::warn("CompleteJob refused: {}", s.error_message());
      return;
    }
    absl::SleepFor(absl::Milliseconds(200 * attempt));
  }
  spdlog::error("could not report the result of lease {}", lease_id);
}

}  // namespace kbench
