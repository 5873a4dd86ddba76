#include "server/core/job_service.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error_proto.h"
#include "base/random_id.h"
#include "base/status_macros.h"
#include "base/untrusted_input.h"
#include "contract/hidden_redact.h"
#include "contract/launch_plan.h"
#include "contract/names.h"
#include "contract/problem_util.h"
#include "server/core/job_service_internal.h"
#include "spdlog/spdlog.h"

namespace kbench {

namespace {

v1::JobResult ErrorResult(v1::Verdict verdict, const absl::Status& status) {
  v1::JobResult r;
  r.set_verdict(verdict);
  *r.mutable_error() = ToErrorProto(status);
  r.set_message(std::string(status.message()));
  return r;
}

// "kernel.cu:3: error: ... (2 errors in all)".
std::string CompileFailureMessage(const v1::CompileReport& report,
                                  const std::string& filename) {
  std::vector<std::string> lines;
  int errors = 0;
  for (const v1::Diagnostic& d : report.diagnostics()) {
    if (d.severity() != "error") continue;
    if (++errors <= 3) {
      lines.push_back(
          absl::StrCat(filename, ":", d.line(), ": error: ", d.message()));
    }
  }
  if (lines.empty()) lines.push_back(report.log());
  std::string msg =
      absl::StrCat("compile failed: ", absl::StrJoin(lines, "; "));
  if (errors > 3) absl::StrAppend(&msg, " (", errors, " errors in all)");
  return msg;
}

}  // namespace

JobService::JobService(const Options& options, const Deps& deps)
    : options_(options),
      store_(deps.store),
      problems_(deps.problems),
      compiler_(deps.compiler),
      workers_(deps.workers),
      jobs_(deps.jobs),
      sessions_(deps.sessions),
      scheduler_(deps.scheduler),
      finisher_(deps.finisher),
      holdout_keys_(deps.holdout_keys),
      problem_kernels_(std::make_unique<ProblemKernels>(deps.compiler)) {}

absl::Status JobService::CheckGpuAvailable() const {
  const absl::Time now = absl::Now();
  if (workers_->AnyLive(now) || now - started_ < options_.worker_grace) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(
      "no GPU worker is connected; correctness, timing and profiling need an "
      "NVIDIA GPU. Start `kbworker --server <kbd address> --gpu 0` on a GPU "
      "host, or run kbd with --local-worker=auto on one. compile_kernel works "
      "without a GPU.");
}

absl::StatusOr<v1::Job> JobService::Submit(v1::JobKind kind,
                                           const v1::KernelRequest& request,
                                           const JobSubmitOptions& options) {
  const absl::Time t0 = absl::Now();
  absl::StatusOr<v1::Job> job = Start(kind, request, options);
  if (!job.ok()) {
    // A refused call is a turn of its session too.
    sessions_->RecordRefused(request.session_id(), kind,
                             absl::ToDoubleMilliseconds(absl::Now() - t0),
                             job.status());
  }
  return job;
}

absl::StatusOr<JobTable::Reservation> JobService::Reserve(int n) {
  absl::StatusOr<JobTable::Reservation> room =
      jobs_->Reserve(n, options_.max_unfinished_jobs);
  if (room.ok() || !absl::IsResourceExhausted(room.status())) return room;
  return absl::ResourceExhaustedError(absl::StrCat(
      "kbd holds ", room.status().message(), " and takes at most ",
      options_.max_unfinished_jobs, " at once (--max-unfinished-jobs)",
      n > 1 ? absl::StrCat(", so not ", n, " more") : "",
      ": wait for some to finish, or cancel some, and submit again"));
}

absl::StatusOr<v1::Job> JobService::Start(v1::JobKind kind,
                                          const v1::KernelRequest& request,
                                          const JobSubmitOptions& options) {
  const std::string id = NewRandomId("j-");
  ASSIGN_OR_RETURN(Prepared p, Prepare(kind, request, id));
  if (kind != v1::JOB_KIND_COMPILE) RETURN_IF_ERROR(CheckGpuAvailable());
  JobTable::Reservation own;
  JobTable::Reservation* room = options.room;
  if (room == nullptr) {
    ASSIGN_OR_RETURN(own, Reserve(1));
    room = &own;
  }
  v1::Job job;
  job.set_id(id);
  job.set_kind(kind);
  job.set_stage(v1::STAGE_QUEUED);
  job.set_stage_detail("waiting for a compile slot");
  job.set_problem(p.request.problem());
  job.set_shape_set(p.request.shape_set());
  job.set_session_id(p.request.session_id());
  job.set_source_digest(p.digest);
  job.set_filename(p.request.filename());
  job.set_sweep_id(options.sweep_id);
  job.set_created_unix_ms(absl::ToUnixMillis(absl::Now()));
  job.set_updated_unix_ms(job.created_unix_ms());
  RETURN_IF_ERROR(store_->PutSource(p.digest, p.request.source()));
  v1::KernelRequest stored = p.request;
  stored.clear_source();
  RETURN_IF_ERROR(jobs_->Insert(job, stored, room));
  sessions_->Touch(job.session_id(), job.problem());
  StartCompile(job.id(), p);
  return jobs_->Get(job.id());
}

void JobService::StartCompile(const std::string& job_id,
                              const Prepared& prepared) {
  (void)jobs_->Update(job_id, [&](v1::Job* j) {
    j->set_stage(v1::STAGE_COMPILING);
    j->set_stage_detail(absl::StrCat("NVRTC for ", prepared.arch));
  });
  auto shared = std::make_shared<Prepared>(prepared);
  // Fairness key: the session. The job is gone once it is DONE (cancelled,
  // or its caller's deadline passed): its compile is then never started.
  CompileService::Caller caller;
  if (!prepared.request.session_id().empty()) {
    caller.client = absl::StrCat("session:", prepared.request.session_id());
  }
  caller.gone = [this, job_id] {
    absl::StatusOr<v1::Job> j = jobs_->Get(job_id);
    return !j.ok() || j->stage() == v1::STAGE_DONE;
  };
  compiler_->Compile(
      prepared.request.source(), prepared.request.filename(), prepared.arch,
      std::move(caller),
      [this, job_id, shared](absl::StatusOr<CompileService::Result> result) {
        OnCompiled(job_id, *shared, std::move(result));
      });
}

void JobService::OnCompiled(const std::string& job_id, const Prepared& p,
                            absl::StatusOr<CompileService::Result> compiled) {
  if (absl::IsUnavailable(compiled.status()) && compiler_->shutting_down()) {
    // kbd is stopping: the job stays unfinished in the store and is re-run
    // by Recover() at the next start. (Otherwise UNAVAILABLE is a compile
    // child killed from outside: an error the caller may retry.)
    return;
  }
  if (!compiled.ok()) {
    // The source policy (InvalidArgument: a host #include, a device-side
    // launch) and the compile sandbox's limits (ResourceExhausted) reject
    // the kernel; anything else is the service's error.
    const bool rejected = absl::IsInvalidArgument(compiled.status()) ||
                          absl::IsResourceExhausted(compiled.status());
    finisher_->Finish(job_id, ErrorResult(rejected ? v1::VERDICT_REJECTED
                                          : absl::IsCancelled(compiled.status())
                                              ? v1::VERDICT_CANCELLED
                                              : v1::VERDICT_ERROR,
                                          compiled.status()));
    return;
  }
  v1::CompileReport report = compiled->report;
  *report.mutable_plan() = p.plan;
  auto fail = [&](v1::Verdict verdict, const absl::Status& status) {
    v1::JobResult r = ErrorResult(verdict, status);
    *r.mutable_compile() = report;
    finisher_->Finish(job_id, std::move(r));
  };
  if (!report.success()) {
    fail(v1::VERDICT_COMPILE_ERROR,
         absl::InvalidArgumentError(
             CompileFailureMessage(report, p.request.filename())));
    return;
  }
  std::vector<std::string> names;
  std::map<std::string, int64_t> static_smem;
  for (const v1::KernelResources& k : report.kernels()) {
    names.push_back(k.name());
    static_smem[k.name()] = k.static_smem_bytes();
  }
  if (absl::Status s = CheckEntryPoints(p.plan, names); !s.ok()) {
    fail(v1::VERDICT_REJECTED, s);
    return;
  }
  const v1::GpuSpec spec =
      workers_->StrictestSpec(p.arch, absl::Now()).value_or(DefaultGpuSpec());
  // Shared memory needs the compiled kernels' static use: the plans that
  // Prepare resolved are checked again with it.
  for (const Prepared::ResolvedShape& r : p.resolved) {
    if (absl::Status s = CheckDeviceLimits(r.plan, spec, static_smem);
        !s.ok()) {
      fail(v1::VERDICT_REJECTED,
           r.hidden_words.empty() ? s : HiddenPlanError(s, r.hidden_words));
      return;
    }
  }
  if (p.kind == v1::JOB_KIND_COMPILE) {
    v1::JobResult r;
    r.set_verdict(v1::VERDICT_PASSED);
    *r.mutable_compile() = report;
    finisher_->Finish(job_id, std::move(r));
    return;
  }
  Enqueue(job_id, p, MakeRunnerJob(job_id, p, *compiled));
}

void JobService::Enqueue(const std::string& job_id, const Prepared& p,
                         v1::RunnerJob runner_job) {
  absl::StatusOr<v1::Job> job = jobs_->Get(job_id);
  if (!job.ok() || job->stage() == v1::STAGE_DONE) return;  // Cancelled.
  if (p.problem->reference() != v1::REFERENCE_OP_GOLDEN_KERNEL) {
    scheduler_->Enqueue(job_id, std::move(runner_job), job->attempts());
    return;
  }
  // The problem's golden and baseline, compiled for the job's arch (cache
  // hits after kbd's start-up check).
  auto shared = std::make_shared<v1::RunnerJob>(std::move(runner_job));
  problem_kernels_->Get(
      *p.problem, p.arch,
      [this, job_id, shared](
          absl::StatusOr<std::shared_ptr<const ProblemKernels::Kernels>> k) {
        if (!k.ok()) {
          if (absl::IsUnavailable(k.status()) && compiler_->shutting_down()) {
            return;  // Re-run by Recover() at the next start.
          }
          finisher_->Finish(job_id, ErrorResult(v1::VERDICT_ERROR, k.status()));
          return;
        }
        AttachProblemKernels(**k, shared.get());
        absl::StatusOr<v1::Job> now = jobs_->Get(job_id);
        if (!now.ok() || now->stage() == v1::STAGE_DONE) return;
        scheduler_->Enqueue(job_id, std::move(*shared), now->attempts());
      });
}

v1::RunnerJob JobService::MakeRunnerJob(
    const std::string& job_id, const Prepared& p,
    const CompileService::Result& compiled) const {
  v1::RunnerJob rj;
  rj.set_job_id(job_id);
  rj.set_kind(p.kind);
  *rj.mutable_problem() = *p.problem;
  rj.set_source(p.request.source());
  rj.set_filename(p.request.filename());
  // Parsed once, in Prepare: the runner does not read the `// @kb` lines.
  *rj.mutable_plan() = p.plan;
  rj.set_source_digest(p.digest);
  if (compiled.cubin) rj.set_cubin(*compiled.cubin);
  rj.set_cubin_arch(p.arch);
  // A problem that spans GPUs is leased as a gang of that many.
  rj.set_world_size(p.problem->world_size());
  for (const v1::ShapeSet& s : p.check_sets) *rj.add_check_sets() = s;
  rj.set_timing_set(p.timing_set);
  *rj.mutable_timing_shape() = p.timing_shape;
  rj.set_trials(p.trials);
  rj.set_seed(absl::Uniform<uint64_t>(absl::BitGen()));
  rj.set_budget_ms(p.budget_ms);
  v1::StoppingCriterion* stop = rj.mutable_stopping();
  stop->set_max_rel_stderr(options_.timing_max_rel_stderr);
  stop->set_min_samples(options_.timing_min_samples);
  stop->set_max_time_ms(options_.timing_max_time_ms);
  *rj.mutable_sanitize_tools() = p.request.sanitize_tools();
  rj.set_timing_hot_l2(p.request.hot_l2());
  if (p.kind == v1::JOB_KIND_PROFILE) {
    rj.set_profile_preset(p.request.profile_preset());
  }
  return rj;
}

std::string JobService::RunTool(v1::JobKind kind,
                                const v1::KernelRequest& request, DoneFn done) {
  absl::StatusOr<v1::Job> job = Submit(kind, request);
  if (!job.ok()) {
    done(job.status());
    return "";
  }
  auto once = std::make_shared<DoneFn>(std::move(done));
  absl::StatusOr<int64_t> token =
      jobs_->Watch(job->id(), [once](const v1::Job& j) {
        if (j.stage() == v1::STAGE_DONE && *once) {
          DoneFn fn = std::move(*once);
          *once = nullptr;
          fn(j);
        }
      });
  if (!token.ok() && *once) (*once)(token.status());
  return job->id();
}

absl::Status JobService::ToolStatus(const v1::Job& job) {
  return FromErrorProto(job.result().error());
}

absl::StatusOr<v1::Job> JobService::GetJob(const std::string& id) {
  RETURN_IF_ERROR(ValidateJobId(id));
  return jobs_->Get(id);
}

absl::StatusOr<std::string> JobService::GetSource(const std::string& digest) {
  RETURN_IF_ERROR(ValidateJobId(digest, "digest",
                                "a digest as a job's source_digest gives it"));
  return store_->GetSource(digest);
}

absl::StatusOr<v1::ListJobsResponse> JobService::ListJobs(
    const v1::ListJobsRequest& r) {
  RETURN_IF_ERROR(ValidateSessionId(r.session_id()));
  RETURN_IF_ERROR(ValidateText(r.page_token(), 256, "page_token"));
  Store::JobQuery q;
  q.page_size = r.page_size();
  q.page_token = r.page_token();
  q.session_id = r.session_id();
  q.stage = r.stage();
  ASSIGN_OR_RETURN(Store::JobPage page, store_->ListJobs(q));
  v1::ListJobsResponse out;
  for (v1::Job& j : page.jobs) {
    // Live stages are fresher in memory than in the store.
    if (auto live = jobs_->Get(j.id()); live.ok()) j = *live;
    v1::Job* o = out.add_jobs();
    *o = std::move(j);
    // Keep the verdict and message; drop the large reports.
    const v1::Verdict verdict = o->result().verdict();
    const std::string message = o->result().message();
    o->clear_result();
    o->mutable_result()->set_verdict(verdict);
    o->mutable_result()->set_message(message);
  }
  out.set_next_page_token(page.next_page_token);
  return out;
}

absl::StatusOr<v1::Job> JobService::Cancel(const std::string& id) {
  RETURN_IF_ERROR(ValidateJobId(id));
  ASSIGN_OR_RETURN(v1::Job job, jobs_->Get(id));
  if (job.stage() == v1::STAGE_DONE) return job;
  scheduler_->Cancel(id);
  finisher_->Finish(id,
                    ErrorResult(v1::VERDICT_CANCELLED,
                                absl::CancelledError("cancelled by a caller")));
  return jobs_->Get(id);
}

absl::StatusOr<int64_t> JobService::Watch(const std::string& id,
                                          JobTable::Watcher watcher) {
  RETURN_IF_ERROR(ValidateJobId(id));
  return jobs_->Watch(id, std::move(watcher));
}

void JobService::Unwatch(const std::string& id, int64_t token) {
  jobs_->Unwatch(id, token);
}

absl::StatusOr<v1::GetGpuSpecsResponse> JobService::GetGpuSpecs(
    const std::string& session_id) {
  RETURN_IF_ERROR(ValidateSessionId(session_id));
  const absl::Time t0 = absl::Now();
  v1::GetGpuSpecsResponse out;
  for (v1::WorkerGpu& g : workers_->Live(t0)) *out.add_gpus() = std::move(g);
  absl::Status status = absl::OkStatus();
  if (out.gpus_size() == 0) {
    const bool starting = absl::Now() - started_ < options_.worker_grace;
    status = absl::FailedPreconditionError(
        starting ? "no GPU worker has connected yet; kbd is starting local "
                   "workers, which connect within seconds: ask again"
                 : "no GPU worker is connected; start `kbworker --server <kbd "
                   "address> --gpu 0` on a GPU host, or run kbd with "
                   "--local-worker=auto on one");
  }
  sessions_->Record(session_id, "get_gpu_specs",
                    absl::ToDoubleMilliseconds(absl::Now() - t0),
                    status.ok() ? v1::VERDICT_PASSED : v1::VERDICT_ERROR,
                    std::string(status.message()));
  if (!status.ok()) return status;
  return out;
}

absl::StatusOr<v1::ListProblemsResponse> JobService::ListProblems(
    const v1::ListProblemsRequest& request) const {
  RETURN_IF_ERROR(ValidateText(request.suite(), 64, "suite"));
  std::vector<const v1::Problem*> problems;
  if (request.suite().empty()) {
    problems = problems_->List();
  } else {
    ASSIGN_OR_RETURN(problems, problems_->ListSuite(request.suite()));
  }
  v1::ListProblemsResponse out;
  for (const v1::Problem* p : problems) *out.add_problems() = PublicView(*p);
  for (const std::string& suite : problems_->Suites()) out.add_suites(suite);
  for (const ProblemRegistry::Refused& r : problems_->refused()) {
    v1::RefusedProblem* refused = out.add_refused();
    refused->set_file(r.file);
    refused->set_error(r.error);
  }
  return out;
}

void JobService::Recover() {
  absl::StatusOr<std::vector<v1::Job>> unfinished =
      store_->ListUnfinishedJobs();
  if (!unfinished.ok()) {
    spdlog::error("recovering jobs: {}",
                  std::string(unfinished.status().message()));
    return;
  }
  for (const v1::Job& job : *unfinished) {
    jobs_->Adopt(job);
    absl::StatusOr<v1::KernelRequest> request = store_->GetJobRequest(job.id());
    absl::StatusOr<std::string> source = store_->GetSource(job.source_digest());
    if (!request.ok() || !source.ok()) {
      finisher_->Finish(
          job.id(),
          ErrorResult(v1::VERDICT_ERROR,
                      absl::DataLossError("kbd restarted and could not reload "
                                          "the job's request; resubmit it")));
      continue;
    }
    request->set_source(*source);
    absl::StatusOr<Prepared> p = Prepare(job.kind(), *request, job.id());
    if (!p.ok()) {
      finisher_->Finish(job.id(), ErrorResult(v1::VERDICT_ERROR, p.status()));
      continue;
    }
    spdlog::info("re-running job {} after a restart", job.id());
    StartCompile(job.id(), *p);
  }
}

}  // namespace kbench
