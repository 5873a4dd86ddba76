#include "server/core/problem_kernels.h"

#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "contract/launch_plan.h"
#include "contract/problem_util.h"
#include "kbench/v1/worker.pb.h"

namespace kbench {
namespace {

// The compiles in flight for one Get, and what they gave.
struct Pending {
  absl::Mutex mu;
  int left ABSL_GUARDED_BY(mu) = 0;
  absl::Status error ABSL_GUARDED_BY(mu);
  ProblemKernels::Kernels kernels ABSL_GUARDED_BY(mu);
};

// One trusted source, copied: the compiles outlive the caller's problem.
struct Source {
  const char* what;
  std::string file;
  std::string source;
  ProblemSource::Kind kind;
};

v1::LaunchPlan* Plan(ProblemKernels::Kernels* k, ProblemSource::Kind kind) {
  return kind == ProblemSource::kGolden     ? &k->golden_plan
         : kind == ProblemSource::kBaseline ? &k->baseline_plan
                                            : &k->expert_plan;
}

std::shared_ptr<const std::string>* CubinOf(ProblemKernels::Kernels* k,
                                            ProblemSource::Kind kind) {
  return kind == ProblemSource::kGolden     ? &k->golden_cubin
         : kind == ProblemSource::kBaseline ? &k->baseline_cubin
                                            : &k->expert_cubin;
}

// The compiled cubin, or why the trusted source did not compile.
absl::StatusOr<std::shared_ptr<const std::string>> Cubin(
    const std::string& problem, const char* what, const std::string& file,
    const std::string& arch, absl::StatusOr<CompileService::Result> r) {
  if (!r.ok()) {
    return absl::Status(
        r.status().code(),
        absl::StrCat("problem '", problem, "': compiling its ", what, " '",
                     file, "' for ", arch, ": ", r.status().message()));
  }
  if (!r->report.success() || r->cubin == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("problem '", problem, "': its ", what, " '", file,
                     "' does not compile for ", arch, " (",
                     r->report.log().substr(0, 300), ")"));
  }
  return r->cubin;
}

}  // namespace

void ProblemKernels::Get(const v1::Problem& problem, const std::string& arch,
                         const Done& done) {
  const std::string key = absl::StrCat(problem.name(), "@", arch);
  std::shared_ptr<const Kernels> cached;
  {
    absl::MutexLock lock(&mu_);
    auto it = ready_.find(key);
    if (it != ready_.end()) cached = it->second;
  }
  if (cached != nullptr) {
    done(cached);
    return;
  }
  auto pending = std::make_shared<Pending>();
  // The trusted ones: the example is the registry's business.
  std::vector<Source> sources;
  for (const ProblemSource& p : ProblemSources(problem)) {
    if (p.kind == ProblemSource::kExample) continue;
    sources.push_back({p.what, *p.file, *p.source, p.kind});
  }
  if (sources.empty()) {
    done(absl::FailedPreconditionError(absl::StrCat(
        "problem '", problem.name(), "' has no golden kernel to compile")));
    return;
  }
  {
    absl::MutexLock lock(&pending->mu);
    pending->left = static_cast<int>(sources.size());
    for (const Source& s : sources) {
      absl::StatusOr<v1::LaunchPlan> plan = ParseLaunchPlan(s.source);
      if (!plan.ok()) {
        pending->error = absl::FailedPreconditionError(
            absl::StrCat("problem '", problem.name(), "': its ", s.what, " '",
                         s.file, "': ", plan.status().message()));
      } else {
        *Plan(&pending->kernels, s.kind) = *std::move(plan);
      }
    }
  }
  const std::string& name = problem.name();
  for (const Source& s : sources) {
    compiles_->Compile(
        s.source, std::filesystem::path(s.file).filename().string(), arch,
        [this, pending, done, key, name, arch,
         s](absl::StatusOr<CompileService::Result> r) {
          absl::StatusOr<std::shared_ptr<const std::string>> cubin =
              Cubin(name, s.what, s.file, arch, std::move(r));
          std::shared_ptr<const Kernels> ready;
          absl::Status error;
          {
            absl::MutexLock lock(&pending->mu);
            if (!cubin.ok() && pending->error.ok()) {
              pending->error = cubin.status();
            } else if (cubin.ok()) {
              *CubinOf(&pending->kernels, s.kind) = *cubin;
            }
            if (--pending->left > 0) return;
            error = pending->error;
            if (error.ok()) {
              ready = std::make_shared<const Kernels>(pending->kernels);
            }
          }
          if (!error.ok()) {
            done(error);
            return;
          }
          {
            absl::MutexLock lock(&mu_);
            ready_.emplace(key, ready);
          }
          done(ready);
        });
  }
}

void AttachProblemKernels(const ProblemKernels::Kernels& kernels,
                          v1::RunnerJob* job) {
  if (kernels.golden_cubin) job->set_golden_cubin(*kernels.golden_cubin);
  *job->mutable_golden_plan() = kernels.golden_plan;
  if (kernels.baseline_cubin) job->set_baseline_cubin(*kernels.baseline_cubin);
  *job->mutable_baseline_plan() = kernels.baseline_plan;
  if (kernels.expert_cubin) job->set_expert_cubin(*kernels.expert_cubin);
  *job->mutable_expert_plan() = kernels.expert_plan;
}

}  // namespace kbench
