#include "worker/runner/line_loads.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/launch_plan.h"
#include "common/problem_util.h"
#include "common/run_child.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"
#include "worker/runner/candidate_module.h"
#include "worker/runner/correctness_checker.h"
#include "worker/runner/cuda_status.h"
#include "worker/runner/sass_line_counters.h"
#include "worker/runner/tensor_set.h"

namespace kbench {

absl::Status CollectLineLoads(DeviceContext* ctx, const v1::RunnerJob& job,
                              v1::ProfileReport* out) {
  const v1::Problem& problem = job.problem();
  if (job.cubin().empty()) {
    return absl::InvalidArgumentError("the job carries no cubin");
  }
  ASSIGN_OR_RETURN(const v1::LaunchPlan plan, ParseLaunchPlan(job.source()));
  ASSIGN_OR_RETURN(const DimValues dims,
                   ShapeDims(problem, job.timing_shape()));
  ASSIGN_OR_RETURN(const ConcretePlan cplan,
                   ResolveLaunchPlan(plan, problem, dims));
  ASSIGN_OR_RETURN(TensorSet tensors, TensorSet::Allocate(problem, dims));
  RETURN_IF_ERROR(
      tensors.FillInputs(TrialSeed(job.seed(), 1 << 20, 0, 0), ctx->stream()));
  const std::string& cubin = job.cubin();
  // Loaded once SASS metrics are on.
  PcSampler::Loader load = [&]() {
    return LoadBoundCopy(ctx, cubin, plan, problem, cplan, tensors);
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

absl::StatusOr<v1::ProfileReport> LineLoadsInChild(const v1::RunnerJob& job,
                                                   const std::string& cubin,
                                                   const std::string& arch,
                                                   int device,
                                                   absl::Duration timeout) {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir_template = absl::StrCat(
      tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/kbrunner-lines-XXXXXX");
  const char* dir = mkdtemp(dir_template.data());
  if (dir == nullptr) return absl::InternalError("mkdtemp failed");
  const std::string job_path = absl::StrCat(dir, "/job.pb");
  const std::string out_path = absl::StrCat(dir, "/lines.pb");
  struct Cleanup {
    std::string dir, job, out;
    ~Cleanup() {
      unlink(job.c_str());
      unlink(out.c_str());
      rmdir(dir.c_str());
    }
  } cleanup{dir, job_path, out_path};
  {
    v1::RunnerJob copy = job;
    copy.set_cubin(cubin);
    copy.set_cubin_arch(arch);
    std::ofstream f(job_path, std::ios::binary | std::ios::trunc);
    if (!f || !copy.SerializeToOstream(&f)) {
      return absl::InternalError("writing the line-loads job");
    }
  }
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return absl::InternalError("cannot find the kbrunner binary");
  self[n] = '\0';
  ASSIGN_OR_RETURN(
      const ChildExit exit,
      RunChild({self, "--device", std::to_string(device), "--log-level", "warn",
                "--line-loads", job_path, out_path},
               timeout));
  if (exit.timed_out) {
    return absl::UnavailableError(
        absl::StrCat("the line-loads child did not finish in ",
                     absl::FormatDuration(timeout)));
  }
  v1::ProfileReport report;
  std::ifstream in(out_path, std::ios::binary);
  const bool parsed = in && report.ParseFromIstream(&in);
  if (parsed && !report.missing().empty()) {
    return absl::UnavailableError(report.missing(0).reason());
  }
  if (exit.exit_code != 0 || !parsed) {
    return absl::UnavailableError(absl::StrCat(
        "the line-loads child failed (exit status ", exit.exit_code,
        ", signal ", exit.signal, "); its log is in the worker's"));
  }
  return report;
}

}  // namespace kbench
