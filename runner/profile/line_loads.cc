#include "runner/profile/line_loads.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/paths.h"
#include "base/process/run_child.h"
#include "base/status_macros.h"
#include "contract/launch_plan.h"
#include "contract/parsed_plan.h"
#include "contract/problem_util.h"
#include "contract/runner_job.h"
#include "runner/check/correctness_checker.h"
#include "runner/device/candidate_module.h"
#include "runner/device/cuda_status.h"
#include "runner/device/tensor_set.h"
#include "runner/profile/sass_line_counters.h"
#include "spdlog/spdlog.h"

namespace kbench {

absl::Status CollectLineLoads(DeviceContext* ctx, const v1::RunnerJob& job,
                              int launch, v1::ProfileReport* out) {
  const v1::Problem& problem = job.problem();
  if (job.cubin().empty()) {
    return absl::InvalidArgumentError("the job carries no cubin");
  }
  // The runner's own job (DIR/job.pb), with the plan kbd sent; checked
  // like any job, since it is read from a file.
  ASSIGN_OR_RETURN(const ParsedPlan parsed, JobPlan(job));
  const v1::LaunchPlan& plan = parsed.plan();
  ASSIGN_OR_RETURN(const DimValues dims,
                   ShapeDims(problem, job.timing_shape()));
  ASSIGN_OR_RETURN(const ConcretePlan cplan, parsed.Resolve(dims));
  ASSIGN_OR_RETURN(TensorSet tensors, TensorSet::Allocate(problem, dims));
  RETURN_IF_ERROR(
      tensors.FillInputs(TrialSeed(job.seed(), 1 << 20, 0, 0), ctx->stream()));
  const std::string& cubin = job.cubin();
  // The plan's steps before `launch` run on one copy of the module; the
  // measured launch on a fresh copy, bound to the same tensors and
  // workspaces (see SassLineCounters::Collect).
  ASSIGN_OR_RETURN(std::unique_ptr<CandidateModule> before,
                   CandidateModule::Load(ctx, cubin, plan, problem));
  ASSIGN_OR_RETURN(std::unique_ptr<BoundPlan> before_bound,
                   before->Bind(cplan, tensors));
  RETURN_IF_ERROR(before_bound->EnqueueUpTo(launch));
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(ctx->stream()),
                       "running the plan up to the measured launch");
  std::unique_ptr<CandidateModule> fresh;
  std::unique_ptr<BoundPlan> fresh_bound;
  PcSampler::Loader load =
      [&]() -> absl::StatusOr<std::function<absl::Status()>> {
    ASSIGN_OR_RETURN(fresh, CandidateModule::Load(ctx, cubin, plan, problem));
    ASSIGN_OR_RETURN(fresh_bound,
                     fresh->Bind(cplan, tensors, before_bound.get()));
    return [&]() { return fresh_bound->EnqueueLaunch(launch); };
  };
  SassLineCounters sass(ctx);
  ASSIGN_OR_RETURN(const SassLineCounters::Result lines,
                   sass.Collect(cubin, load));
  for (const auto& [where, loads] : lines) {
    v1::SourceLine* l = out->add_hot_lines();
    l->set_file(where.first);
    l->set_line(where.second);
    l->set_global_load_requests(loads.requests);
    l->set_global_load_sectors(loads.sectors);
    if (loads.requests > 0) {
      l->set_global_load_sectors_per_request(
          static_cast<double>(loads.sectors) / loads.requests);
    }
  }
  return absl::OkStatus();
}

int ServeLineLoads(DeviceContext* ctx, const std::string& dir) {
  { std::ofstream(dir + "/ready") << "ready\n"; }
  std::string cue;
  if (!std::getline(std::cin, cue)) return 0;  // No work: the runner left.
  int launch = 0;
  const bool cue_ok =
      absl::StartsWith(cue, "go ") && absl::SimpleAtoi(cue.substr(3), &launch);
  const auto t0 = std::chrono::steady_clock::now();
  v1::RunnerJob job;
  v1::ProfileReport report;
  absl::Status s = absl::OkStatus();
  {
    std::ifstream in(dir + "/job.pb", std::ios::binary);
    if (!in || !job.ParseFromIstream(&in)) {
      s = absl::InvalidArgumentError("cannot read the job");
    }
  }
  if (s.ok() && !cue_ok) {
    s = absl::InvalidArgumentError(absl::StrCat("bad cue '", cue, "'"));
  }
  if (s.ok()) s = CollectLineLoads(ctx, job, launch, &report);
  spdlog::info("line loads: collected in {:.0f} ms",
               std::chrono::duration<double, std::milli>(
                   std::chrono::steady_clock::now() - t0)
                   .count());
  if (!s.ok()) {
    report.Clear();
    v1::MissingFigure* m = report.add_missing();
    m->set_figure("hot_lines.global_load_sectors_per_request");
    m->set_reason(std::string(s.message()));
  }
  {
    // Written whole, then renamed: the runner reads it as soon as it is
    // there, without waiting for this process's exit.
    std::ofstream out(dir + "/lines.tmp", std::ios::binary | std::ios::trunc);
    if (!out || !report.SerializeToOstream(&out)) return 1;
  }
  if (rename((dir + "/lines.tmp").c_str(), (dir + "/lines.pb").c_str()) != 0) {
    return 1;
  }
  return s.ok() ? 0 : 1;
}

LineLoadsChild::~LineLoadsChild() {
  Discard(&spare_);
  if (exiting_ > 0) {
    kill(exiting_, SIGKILL);
    (void)WaitChild(exiting_, absl::Seconds(10));
  }
}

void LineLoadsChild::Discard(Child* c) {
  if (c->cue_fd >= 0) close(c->cue_fd);
  if (c->pid > 0) {
    kill(c->pid, SIGKILL);
    (void)WaitChild(c->pid, absl::Seconds(10));
  }
  if (!c->dir.empty()) {
    for (const char* f : {"/job.pb", "/lines.tmp", "/lines.pb", "/ready"}) {
      unlink((c->dir + f).c_str());
    }
    rmdir(c->dir.c_str());
  }
  *c = Child();
}

absl::Status LineLoadsChild::Start() {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir_template = absl::StrCat(
      tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/kbrunner-lines-XXXXXX");
  if (mkdtemp(dir_template.data()) == nullptr) {
    return absl::InternalError("mkdtemp failed");
  }
  spare_.dir = dir_template;
  const std::string self =
      options_.kbrunner.empty() ? ExePath() : options_.kbrunner;
  if (self.empty()) {
    return absl::InternalError("cannot find the kbrunner binary");
  }
  ASSIGN_OR_RETURN(
      const StartedChild child,
      StartChild({self, "--device", std::to_string(options_.device),
                  "--log-level", "info", "--line-loads-wait", spare_.dir},
                 true));
  spare_.pid = child.pid;
  spare_.cue_fd = child.stdin_fd;
  spare_.started = absl::Now();
  return absl::OkStatus();
}

void LineLoadsChild::WaitQuiet() {
  if (exiting_ > 0) {
    const absl::StatusOr<ChildExit> exit =
        WaitChild(exiting_, options_.run_timeout);
    if (!exit.ok() || exit->timed_out) {
      spdlog::warn("the last line-loads child did not exit; killed");
    }
    exiting_ = -1;
  }
  if (spare_.pid <= 0 || spare_.ready) return;
  const std::string ready = spare_.dir + "/ready";
  while (absl::Now() < spare_.started + options_.ready_timeout) {
    if (access(ready.c_str(), F_OK) == 0) {
      spare_.ready = true;
      return;
    }
    // A child that died while starting is dropped (and started again
    // when needed).
    int status = 0;
    if (waitpid(spare_.pid, &status, WNOHANG) == spare_.pid) {
      spdlog::warn("the line-loads child ended while starting (status {})",
                   status);
      spare_.pid = -1;
      Discard(&spare_);
      return;
    }
    absl::SleepFor(absl::Milliseconds(2));
  }
  spdlog::warn("the line-loads child was not ready in {}; killed",
               absl::FormatDuration(options_.ready_timeout));
  Discard(&spare_);
}

absl::StatusOr<v1::ProfileReport> LineLoadsChild::Run(const v1::RunnerJob& job,
                                                      const std::string& cubin,
                                                      const std::string& arch,
                                                      int launch) {
  if (spare_.pid <= 0) {
    if (absl::Status s = Start(); !s.ok()) {
      Discard(&spare_);
      return absl::UnavailableError(
          absl::StrCat("starting the line-loads child: ", s.message()));
    }
  }
  WaitQuiet();
  if (spare_.pid <= 0) {
    return absl::UnavailableError(
        "the line-loads child did not start; its log is in the worker's");
  }
  Child current = spare_;
  spare_ = Child();
  {
    v1::RunnerJob copy = job;
    copy.set_cubin(cubin);
    copy.set_cubin_arch(arch);
    std::ofstream f(current.dir + "/job.pb",
                    std::ios::binary | std::ios::trunc);
    if (!f || !copy.SerializeToOstream(&f)) {
      Discard(&current);
      return absl::InternalError("writing the line-loads job");
    }
  }
  if (absl::Status s = Start(); !s.ok()) {
    spdlog::warn("starting a spare line-loads child: {}",
                 std::string(s.message()));
    Discard(&spare_);
  }
  absl::StatusOr<v1::ProfileReport> report = Cue(&current, launch);
  Discard(&current);  // Kills a child that timed out or was never cued.
  return report;
}

absl::StatusOr<v1::ProfileReport> LineLoadsChild::Cue(Child* c, int launch) {
  const absl::Time start = absl::Now();
  const std::string cue = absl::StrCat("go ", launch, "\n");
  const bool cued = write(c->cue_fd, cue.data(), cue.size()) ==
                    static_cast<ssize_t>(cue.size());
  close(c->cue_fd);
  c->cue_fd = -1;
  // Done when lines.pb appears (the child's exit, its context's teardown,
  // is waited for by WaitQuiet, before the next measurement), or when the
  // child ends without it.
  const std::string lines = c->dir + "/lines.pb";
  bool written = false;
  ChildExit exit;
  bool ended = false;
  while (cued) {
    if (access(lines.c_str(), F_OK) == 0) {
      written = true;
      break;
    }
    int status = 0;
    if (waitpid(c->pid, &status, WNOHANG) == c->pid) {
      ended = true;
      if (WIFEXITED(status)) exit.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) exit.signal = WTERMSIG(status);
      written = access(lines.c_str(), F_OK) == 0;
      break;
    }
    if (absl::Now() >= start + options_.run_timeout) {
      exit.timed_out = true;
      break;
    }
    absl::SleepFor(absl::Milliseconds(1));
  }
  spdlog::info("line loads: the child ran for {:.0f} ms",
               absl::ToDoubleMilliseconds(absl::Now() - start));
  v1::ProfileReport report;
  bool parsed = false;
  if (written) {
    std::ifstream in(lines, std::ios::binary);
    parsed = in && report.ParseFromIstream(&in);
  }
  if (written && !ended) {
    exiting_ = c->pid;  // Reaped by WaitQuiet.
    c->pid = -1;
  }
  if (ended) c->pid = -1;
  if (!cued) return absl::UnavailableError("the line-loads child was gone");
  if (exit.timed_out) {
    return absl::UnavailableError(
        absl::StrCat("the line-loads child did not finish in ",
                     absl::FormatDuration(options_.run_timeout)));
  }
  if (parsed && !report.missing().empty()) {
    return absl::UnavailableError(report.missing(0).reason());
  }
  if (!parsed) {
    return absl::UnavailableError(absl::StrCat(
        "the line-loads child failed (exit status ", exit.exit_code,
        ", signal ", exit.signal, "); its log is in the worker's"));
  }
  return report;
}

}  // namespace kbench
