#include "server/core/problem_kernels_check.h"

#include <filesystem>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "contract/launch_plan.h"
#include "contract/problem_util.h"

namespace kbench {
namespace {

// One compile's outcome, shared with its callback (which may outlive a
// timed-out wait).
struct Pending {
  absl::Notification done;
  absl::Mutex mu;
  absl::StatusOr<CompileService::Result> result ABSL_GUARDED_BY(mu) =
      absl::UnknownError("not compiled");
};

struct Kernel {
  const char* what;  // "golden kernel"
  std::string file;  // As the problem names it.
  const std::string* source;
  std::shared_ptr<Pending> pending;
};

// The first error diagnostic as "file:line: message", else the log's start.
std::string FirstError(const v1::CompileReport& report,
                       const std::string& name) {
  for (const v1::Diagnostic& d : report.diagnostics()) {
    if (d.severity() != "error") continue;
    return absl::StrCat(name, d.line() > 0 ? absl::StrCat(":", d.line()) : "",
                        ": ", d.message());
  }
  return report.log().substr(0, 400);
}

absl::Status Judge(const Kernel& k, const std::string& arch) {
  absl::MutexLock lock(&k.pending->mu);
  const absl::StatusOr<CompileService::Result>& r = k.pending->result;
  const std::string name = std::filesystem::path(k.file).filename().string();
  if (!r.ok()) {
    return absl::Status(r.status().code(),
                        absl::StrCat(k.what, " '", k.file, "': compiling for ",
                                     arch, ": ", r.status().message()));
  }
  if (!r->report.success()) {
    return absl::InvalidArgumentError(
        absl::StrCat(k.what, " '", k.file, "' does not compile for ", arch,
                     ": ", FirstError(r->report, name)));
  }
  std::set<std::string> defined;
  for (const v1::KernelResources& kr : r->report.kernels()) {
    defined.insert(kr.name());
  }
  absl::StatusOr<v1::LaunchPlan> plan = ParseLaunchPlan(*k.source);
  if (!plan.ok()) return plan.status();  // The registry checked it.
  for (const v1::LaunchSpec& launch : plan->launches()) {
    if (defined.count(launch.entry()) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          k.what, " '", k.file, "':", launch.line(),
          ": its launch plan launches '", launch.entry(),
          "', which it does not define as an extern \"C\" "
          "__global__ kernel (it defines: ",
          defined.empty() ? std::string("none") : absl::StrJoin(defined, ", "),
          ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckProblemKernels(CompileService* compiles,
                                 const std::string& arch,
                                 const v1::Problem& problem,
                                 absl::Duration timeout) {
  std::vector<Kernel> kernels;
  for (const ProblemSource& p : ProblemSources(problem)) {
    kernels.push_back({p.what, *p.file, p.source, nullptr});
  }
  // All compile at once.
  for (Kernel& k : kernels) {
    k.pending = std::make_shared<Pending>();
    compiles->Compile(
        *k.source, std::filesystem::path(k.file).filename().string(), arch,
        [pending = k.pending](absl::StatusOr<CompileService::Result> r) {
          {
            absl::MutexLock lock(&pending->mu);
            pending->result = std::move(r);
          }
          pending->done.Notify();
        });
  }
  const absl::Time deadline = absl::Now() + timeout;
  for (const Kernel& k : kernels) {
    if (!k.pending->done.WaitForNotificationWithDeadline(deadline)) {
      return absl::DeadlineExceededError(
          absl::StrCat(k.what, " '", k.file, "': no compile result within ",
                       absl::FormatDuration(timeout)));
    }
    if (absl::Status s = Judge(k, arch); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace kbench
