#include "server/grpc/kbench_grpc_service.h"

#include <deque>
#include <functional>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/grpc/grpc_status.h"
#include "server/grpc/reactor_handle.h"

namespace kbench {
namespace {

// A tool call: submits the job and finishes the RPC when the job is done.
// If the caller goes away (cancel or deadline), the job is cancelled.
class ToolReactor : public grpc::ServerUnaryReactor {
 public:
  using Fill = std::function<void(const v1::Job&)>;

  ToolReactor(JobService* jobs, v1::JobKind kind,
              const v1::KernelRequest& request, Fill fill)
      : jobs_(jobs), handle_(std::make_shared<Handle>(this)) {
    std::shared_ptr<Handle> handle = handle_;
    job_id_ = jobs_->RunTool(
        kind, request,
        [handle, fill = std::move(fill)](absl::StatusOr<v1::Job> job) {
          if (!job.ok()) {
            handle->Finish(ToGrpcStatus(job.status()));
            return;
          }
          handle->Finish(ToGrpcStatus(JobService::ToolStatus(*job)),
                         [&] { fill(*job); });
        });
  }

  void OnCancel() override {
    // Cancel before Finish: Finish may run OnDone, which deletes this.
    JobService* jobs = jobs_;
    const std::string job_id = job_id_;
    if (!job_id.empty()) (void)jobs->Cancel(job_id);
    handle_->Finish(grpc::Status(grpc::StatusCode::CANCELLED,
                                 "the call was cancelled or its deadline "
                                 "passed; the job was cancelled"));
  }

  void OnDone() override {
    handle_->Detach();
    delete this;
  }

 private:
  using Handle = ReactorHandle<ToolReactor>;
  JobService* jobs_;
  std::shared_ptr<Handle> handle_;
  std::string job_id_;
};

// A tool whose response carries the job id and its whole result.
template <typename Response>
grpc::ServerUnaryReactor* ResultTool(JobService* jobs, v1::JobKind kind,
                                     const v1::KernelRequest& request,
                                     Response* response) {
  return new ToolReactor(jobs, kind, request, [response](const v1::Job& job) {
    response->set_job_id(job.id());
    *response->mutable_result() = job.result();
  });
}

grpc::ServerUnaryReactor* Done(grpc::CallbackServerContext* ctx,
                               const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

// Streams a job's changes until it is DONE.
class WatchReactor : public grpc::ServerWriteReactor<v1::WatchJobResponse> {
 public:
  WatchReactor(JobService* jobs, const std::string& id)
      : jobs_(jobs), id_(id), state_(std::make_shared<State>()) {
    state_->reactor = this;
    std::shared_ptr<State> state = state_;
    absl::StatusOr<int64_t> token =
        jobs_->Watch(id, [state](const v1::Job& job) { state->Push(job); });
    if (!token.ok()) {
      state_->Fail(ToGrpcStatus(token.status()));
    } else {
      absl::MutexLock lock(&state_->mu);
      state_->token = *token;
    }
  }

  void OnWriteDone(bool ok) override { state_->WriteDone(ok); }
  void OnCancel() override {
    state_->Fail(grpc::Status(grpc::StatusCode::CANCELLED, "watch cancelled"));
  }
  void OnDone() override {
    int64_t token = 0;
    {
      absl::MutexLock lock(&state_->mu);
      state_->reactor = nullptr;
      token = state_->token;
    }
    jobs_->Unwatch(id_, token);
    delete this;
  }

 private:
  struct State {
    absl::Mutex mu;
    WatchReactor* reactor = nullptr;
    std::deque<v1::WatchJobResponse> pending;
    bool writing = false, done_seen = false, finished = false;
    int64_t token = 0;

    // Queues a change; starts a write when none is in flight. Writes are
    // started outside the lock in case gRPC reacts inline.
    void Push(const v1::Job& job) {
      WatchReactor* r = nullptr;
      const v1::WatchJobResponse* next = nullptr;
      {
        absl::MutexLock lock(&mu);
        if (finished || reactor == nullptr) return;
        v1::WatchJobResponse msg;
        *msg.mutable_job() = job;
        pending.push_back(std::move(msg));
        if (job.stage() == v1::STAGE_DONE) done_seen = true;
        if (writing) return;
        writing = true;
        r = reactor;
        next = &pending.front();
      }
      r->StartWrite(next);
    }
    void WriteDone(bool ok) {
      WatchReactor* r = nullptr;
      const v1::WatchJobResponse* next = nullptr;
      bool finish = false;
      {
        absl::MutexLock lock(&mu);
        pending.pop_front();
        writing = false;
        if (finished || reactor == nullptr) return;
        if (ok && !pending.empty()) {
          writing = true;
          next = &pending.front();
        } else if (!ok || done_seen) {
          finished = true;
          finish = true;
        }
        r = reactor;
      }
      if (next != nullptr) r->StartWrite(next);
      if (finish) r->Finish(grpc::Status::OK);
    }
    void Fail(const grpc::Status& status) {
      WatchReactor* r = nullptr;
      {
        absl::MutexLock lock(&mu);
        if (finished || reactor == nullptr) return;
        finished = true;
        r = reactor;
      }
      r->Finish(status);
    }
  };

  JobService* jobs_;
  std::string id_;
  std::shared_ptr<State> state_;
};

}  // namespace

grpc::ServerUnaryReactor* KbenchGrpcService::GetGpuSpecs(
    grpc::CallbackServerContext* ctx, const v1::GetGpuSpecsRequest* request,
    v1::GetGpuSpecsResponse* response) {
  absl::StatusOr<v1::GetGpuSpecsResponse> specs =
      jobs_->GetGpuSpecs(request->session_id());
  if (specs.ok()) *response = std::move(*specs);
  return Done(ctx, specs.status());
}

grpc::ServerUnaryReactor* KbenchGrpcService::CompileKernel(
    grpc::CallbackServerContext* ctx, const v1::CompileKernelRequest* request,
    v1::CompileKernelResponse* response) {
  return new ToolReactor(jobs_, v1::JOB_KIND_COMPILE, request->kernel(),
                         [response](const v1::Job& job) {
                           response->set_job_id(job.id());
                           *response->mutable_compile() =
                               job.result().compile();
                         });
}

grpc::ServerUnaryReactor* KbenchGrpcService::RunCorrectness(
    grpc::CallbackServerContext* ctx, const v1::RunCorrectnessRequest* request,
    v1::RunCorrectnessResponse* response) {
  return ResultTool(jobs_, v1::JOB_KIND_CORRECTNESS, request->kernel(),
                    response);
}

grpc::ServerUnaryReactor* KbenchGrpcService::ProfileKernel(
    grpc::CallbackServerContext* ctx, const v1::ProfileKernelRequest* request,
    v1::ProfileKernelResponse* response) {
  return ResultTool(jobs_, v1::JOB_KIND_PROFILE, request->kernel(), response);
}

grpc::ServerUnaryReactor* KbenchGrpcService::SubmitKernel(
    grpc::CallbackServerContext* ctx, const v1::SubmitKernelRequest* request,
    v1::SubmitKernelResponse* response) {
  return ResultTool(jobs_, v1::JOB_KIND_SUBMIT, request->kernel(), response);
}

grpc::ServerUnaryReactor* KbenchGrpcService::SanitizeKernel(
    grpc::CallbackServerContext* ctx, const v1::SanitizeKernelRequest* request,
    v1::SanitizeKernelResponse* response) {
  for (const std::string& tool : request->kernel().sanitize_tools()) {
    if (tool != "memcheck" && tool != "racecheck" && tool != "initcheck") {
      return Done(ctx, absl::InvalidArgumentError(absl::StrCat(
                           "kernel.sanitize_tools has '", tool,
                           "'; allowed: memcheck, racecheck, initcheck")));
    }
  }
  return ResultTool(jobs_, v1::JOB_KIND_SANITIZE, request->kernel(), response);
}

grpc::ServerUnaryReactor* KbenchGrpcService::ListProblems(
    grpc::CallbackServerContext* ctx, const v1::ListProblemsRequest* request,
    v1::ListProblemsResponse* response) {
  absl::StatusOr<v1::ListProblemsResponse> r = jobs_->ListProblems(*request);
  if (!r.ok()) return Done(ctx, r.status());
  *response = *std::move(r);
  return Done(ctx, absl::OkStatus());
}

grpc::ServerUnaryReactor* KbenchGrpcService::GetProblem(
    grpc::CallbackServerContext* ctx, const v1::GetProblemRequest* request,
    v1::GetProblemResponse* response) {
  absl::StatusOr<v1::GetProblemResponse> r =
      agent_->GetProblem(request->name(), request->session_id());
  if (r.ok()) *response = std::move(*r);
  return Done(ctx, r.status());
}

grpc::ServerUnaryReactor* KbenchGrpcService::CompareRuns(
    grpc::CallbackServerContext* ctx, const v1::CompareRunsRequest* request,
    v1::CompareRunsResponse* response) {
  absl::StatusOr<v1::CompareRunsResponse> r = agent_->CompareRuns(
      request->session_id(), request->turn_a(), request->turn_b());
  if (r.ok()) *response = std::move(*r);
  return Done(ctx, r.status());
}

grpc::ServerUnaryReactor* KbenchGrpcService::CreateSession(
    grpc::CallbackServerContext* ctx, const v1::CreateSessionRequest* request,
    v1::CreateSessionResponse* response) {
  absl::StatusOr<v1::Session> s =
      agent_->CreateSession(request->problem(), request->id());
  if (s.ok()) *response->mutable_session() = std::move(*s);
  return Done(ctx, s.status());
}

grpc::ServerUnaryReactor* KbenchGrpcService::GetSession(
    grpc::CallbackServerContext* ctx, const v1::GetSessionRequest* request,
    v1::GetSessionResponse* response) {
  absl::StatusOr<v1::GetSessionResponse> r =
      agent_->GetSession(request->session_id());
  if (r.ok()) *response = std::move(*r);
  return Done(ctx, r.status());
}

grpc::ServerUnaryReactor* KbenchGrpcService::ListSessions(
    grpc::CallbackServerContext* ctx, const v1::ListSessionsRequest* request,
    v1::ListSessionsResponse* response) {
  absl::StatusOr<std::vector<v1::Session>> r =
      agent_->ListSessions(request->limit());
  if (r.ok()) {
    for (v1::Session& s : *r) *response->add_sessions() = std::move(s);
  }
  return Done(ctx, r.status());
}

grpc::ServerUnaryReactor* KbenchGrpcService::CloseSession(
    grpc::CallbackServerContext* ctx, const v1::CloseSessionRequest* request,
    v1::CloseSessionResponse* response) {
  absl::StatusOr<v1::Session> s = agent_->CloseSession(request->session_id());
  if (s.ok()) *response->mutable_session() = std::move(*s);
  return Done(ctx, s.status());
}

grpc::ServerUnaryReactor* KbenchGrpcService::SubmitJob(
    grpc::CallbackServerContext* ctx, const v1::SubmitJobRequest* request,
    v1::SubmitJobResponse* response) {
  absl::StatusOr<v1::Job> job =
      jobs_->Submit(request->kind(), request->kernel());
  if (job.ok()) *response->mutable_job() = std::move(*job);
  return Done(ctx, job.status());
}

grpc::ServerUnaryReactor* KbenchGrpcService::GetJob(
    grpc::CallbackServerContext* ctx, const v1::GetJobRequest* request,
    v1::GetJobResponse* response) {
  absl::StatusOr<v1::Job> job = jobs_->GetJob(request->job_id());
  if (!job.ok()) return Done(ctx, job.status());
  if (request->include_source()) {
    absl::StatusOr<std::string> source = jobs_->GetSource(job->source_digest());
    if (source.ok()) response->set_source(std::move(*source));
  }
  *response->mutable_job() = std::move(*job);
  return Done(ctx, absl::OkStatus());
}

grpc::ServerWriteReactor<v1::WatchJobResponse>* KbenchGrpcService::WatchJob(
    grpc::CallbackServerContext* ctx, const v1::WatchJobRequest* request) {
  return new WatchReactor(jobs_, request->job_id());
}

grpc::ServerUnaryReactor* KbenchGrpcService::ListJobs(
    grpc::CallbackServerContext* ctx, const v1::ListJobsRequest* request,
    v1::ListJobsResponse* response) {
  absl::StatusOr<v1::ListJobsResponse> page = jobs_->ListJobs(*request);
  if (page.ok()) *response = std::move(*page);
  return Done(ctx, page.status());
}

grpc::ServerUnaryReactor* KbenchGrpcService::CancelJob(
    grpc::CallbackServerContext* ctx, const v1::CancelJobRequest* request,
    v1::CancelJobResponse* response) {
  absl::StatusOr<v1::Job> job = jobs_->Cancel(request->job_id());
  if (job.ok()) *response->mutable_job() = std::move(*job);
  return Done(ctx, job.status());
}

grpc::ServerUnaryReactor* KbenchGrpcService::SubmitSweep(
    grpc::CallbackServerContext* ctx, const v1::SubmitSweepRequest* request,
    v1::SubmitSweepResponse* response) {
  absl::StatusOr<v1::Sweep> sweep = sweeps_->Submit(*request);
  if (sweep.ok()) *response->mutable_sweep() = std::move(*sweep);
  return Done(ctx, sweep.status());
}

grpc::ServerUnaryReactor* KbenchGrpcService::GetSweep(
    grpc::CallbackServerContext* ctx, const v1::GetSweepRequest* request,
    v1::GetSweepResponse* response) {
  absl::StatusOr<v1::Sweep> sweep = sweeps_->Get(request->sweep_id());
  if (sweep.ok()) *response->mutable_sweep() = std::move(*sweep);
  return Done(ctx, sweep.status());
}

}  // namespace kbench
