#include "client/sweep_command.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/job_waiter.h"
#include "client/kbench_client.h"
#include "contract/launch_plan.h"
#include "contract/names.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;

// The kernel's median on the basis its speedup used.
double BasisKernelUs(const v1::TimingReport& t) {
  switch (t.speedup_basis()) {
    case v1::TIMING_BASIS_GPU_TIME:
      return t.kernel_gpu().median_us();
    case v1::TIMING_BASIS_GRAPH:
      return t.kernel_graph().median_us();
    default:
      return t.kernel().median_us();
  }
}

// Kernel files of `dir` by the problem they name; files that name none,
// cannot be read or are too large go to `notes`.
absl::StatusOr<std::map<std::string, std::string>> KernelFiles(
    const std::string& dir, std::map<std::string, std::string>* sources,
    std::vector<std::string>* notes) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(
        absl::StrCat("'", dir, "' is not a folder of kernel files"));
  }
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->path().extension() == ".cu" && it->is_regular_file(ec)) {
      files.push_back(it->path());
    }
  }
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot list '", dir, "': ", ec.message()));
  }
  std::sort(files.begin(), files.end());
  if (files.size() > static_cast<size_t>(kMaxSweepFiles)) {
    notes->push_back(absl::StrCat("only the first ", kMaxSweepFiles, " of ",
                                  files.size(), " .cu files were read"));
    files.resize(kMaxSweepFiles);
  }
  std::map<std::string, std::string> by_problem;
  for (const fs::path& path : files) {
    const std::string name = path.filename().string();
    const uintmax_t size = fs::file_size(path, ec);
    if (ec || size > static_cast<uintmax_t>(kMaxSweepFileBytes)) {
      notes->push_back(absl::StrCat(name, ": skipped, larger than ",
                                    kMaxSweepFileBytes, " bytes"));
      continue;
    }
    absl::StatusOr<std::string> source = ReadSourceFile(path.string());
    if (!source.ok()) {
      notes->push_back(absl::StrCat(name, ": ", source.status().message()));
      continue;
    }
    absl::StatusOr<v1::LaunchPlan> plan = ParseLaunchPlan(*source);
    if (!plan.ok() || plan->problem().empty()) {
      notes->push_back(absl::StrCat(
          name, ": skipped, no `// @kb problem NAME` line",
          plan.ok() ? "" : absl::StrCat(" (", plan.status().message(), ")")));
      continue;
    }
    auto [it, inserted] = by_problem.emplace(plan->problem(), name);
    if (!inserted) {
      notes->push_back(absl::StrCat(name, ": skipped, ", it->second,
                                    " already names problem ",
                                    plan->problem()));
      continue;
    }
    (*sources)[name] = *std::move(source);
  }
  return by_problem;
}

}  // namespace

std::string FormatSweep(const std::string& suite,
                        const std::vector<SweepRow>& rows,
                        const std::vector<std::string>& notes) {
  std::string out =
      absl::StrCat("sweep of suite ", suite, ": ", rows.size(),
                   rows.size() == 1 ? " problem\n\n" : " problems\n\n");
  absl::StrAppend(&out,
                  "| problem | kernel | verdict | speedup | of floor | wall |\n"
                  "|---|---|---|---:|---:|---:|\n");
  double log_sum = 0;
  int passed = 0;
  for (const SweepRow& r : rows) {
    std::string verdict = "-", speedup = "-", floor = "-", wall = "-";
    if (r.submitted) {
      const v1::JobResult& result = r.job.result();
      verdict = VerdictName(result.verdict());
      const v1::TimingReport& t = result.timing();
      if (result.verdict() == v1::VERDICT_PASSED && t.speedup() > 0) {
        speedup = absl::StrFormat("%.2fx", t.speedup());
        log_sum += std::log(t.speedup());
        ++passed;
        const double kernel_us = BasisKernelUs(t);
        if (t.floor_us() > 0 && kernel_us > 0) {
          floor = absl::StrFormat("%.1f %%", 100 * t.floor_us() / kernel_us);
        }
      }
      wall = absl::StrFormat("%.2f s", r.wall_s);
    } else {
      verdict = r.file.empty() ? "no kernel" : "not run";
    }
    absl::StrAppend(&out, "| ", r.problem, " | ", r.file.empty() ? "-" : r.file,
                    " | ", verdict, " | ", speedup, " | ", floor, " | ", wall,
                    " |\n");
  }
  absl::StrAppend(
      &out, "\n",
      passed > 0
          ? absl::StrFormat("geomean speedup over the %d passed: %.2fx\n",
                            passed, std::exp(log_sum / passed))
          : std::string("geomean speedup: none passed\n"));
  for (const SweepRow& r : rows) {
    if (!r.error.empty()) absl::StrAppend(&out, r.problem, ": ", r.error, "\n");
  }
  for (const std::string& note : notes) absl::StrAppend(&out, note, "\n");
  return out;
}

int RunSweep(const GlobalOptions& global, const SweepOptions& options,
             std::ostream& out, std::ostream& err) {
  KbenchClient client(global.server, UnaryTimeout(global));
  v1::ListProblemsRequest list;
  list.set_suite(options.suite);
  absl::StatusOr<v1::ListProblemsResponse> problems = client.ListProblems(list);
  if (!problems.ok()) {
    return FailCommand(problems.status(), global, client, err);
  }
  std::map<std::string, std::string> sources;
  std::vector<std::string> notes;
  absl::StatusOr<std::map<std::string, std::string>> files =
      KernelFiles(options.dir, &sources, &notes);
  if (!files.ok()) return ReportError(files.status(), "", false, err);

  std::vector<SweepRow> rows;
  bool all_passed = true;
  for (const v1::Problem& problem : problems->problems()) {
    SweepRow row;
    row.problem = problem.name();
    auto file = files->find(problem.name());
    if (file == files->end()) {
      row.error = absl::StrCat("no .cu file in ", options.dir,
                               " has `// @kb problem ", problem.name(), "`");
      all_passed = false;
      rows.push_back(std::move(row));
      continue;
    }
    row.file = file->second;
    err << "sweep: submitting " << row.file << " for " << row.problem << "\n";
    const auto t0 = std::chrono::steady_clock::now();
    v1::SubmitJobRequest request;
    request.set_kind(v1::JOB_KIND_SUBMIT);
    v1::KernelRequest* kernel = request.mutable_kernel();
    kernel->set_source(sources[row.file]);
    kernel->set_filename(row.file);
    kernel->set_problem(row.problem);
    kernel->set_session_id(options.session);
    absl::StatusOr<v1::SubmitJobResponse> submitted = client.SubmitJob(request);
    absl::StatusOr<v1::Job> job =
        submitted.ok() ? WaitForJob(client, submitted->job().id(),
                                    absl::Seconds(global.timeout_s), nullptr)
                       : absl::StatusOr<v1::Job>(submitted.status());
    row.wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    if (job.ok()) {
      row.submitted = true;
      row.job = *std::move(job);
      all_passed &= row.job.result().verdict() == v1::VERDICT_PASSED;
    } else {
      // An unreachable kbd ends the sweep; a refused submit is this row's.
      if (job.status().code() == absl::StatusCode::kUnavailable &&
          !client.Connected()) {
        return FailCommand(job.status(), global, client, err);
      }
      row.error =
          absl::StrCat(StatusCodeName(static_cast<int>(job.status().code())),
                       ": ", job.status().message());
      all_passed = false;
    }
    rows.push_back(std::move(row));
  }
  if (global.json) {
    v1::ListJobsResponse jobs;
    for (const SweepRow& r : rows) {
      if (r.submitted) *jobs.add_jobs() = r.job;
    }
    const int printed = PrintJson(jobs, out, err);
    if (printed != kExitOk) return printed;
  } else {
    out << FormatSweep(options.suite, rows, notes);
  }
  return all_passed ? kExitOk : kExitNotPassed;
}

}  // namespace kbench
