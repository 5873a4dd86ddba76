#include "client/sweep_command.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/error_proto.h"
#include "base/untrusted_input.h"
#include "client/job_waiter.h"
#include "client/kbench_client.h"
#include "contract/launch_plan.h"
#include "contract/names.h"
#include "contract/sweep_table.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;

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
    // kbd takes only plain file names (they reach NVRTC and log lines).
    if (!ValidateFileName(name).ok()) {
      notes->push_back(absl::StrCat(
          absl::CHexEscape(name),
          ": skipped, kbd takes file names of letters, digits and . _ + - "
          "and spaces (1 to 128 bytes): rename it"));
      continue;
    }
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

// Where a row stands: its verdict when done, its stage before, or why it
// has no job.
std::string RowState(const v1::SweepRow& r) {
  if (r.job_id().empty()) {
    if (r.error().code() != 0) return "refused";
    return r.filename().empty() ? "no kernel" : "not run";
  }
  if (r.stage() != v1::STAGE_DONE) return StageName(r.stage());
  if (r.verdict() == v1::VERDICT_UNSPECIFIED) return "unknown";
  return VerdictName(r.verdict());
}

std::string Seconds(double ms) {
  return ms > 0 ? absl::StrFormat("%.2f s", ms / 1000) : "-";
}

// How a sweep's run ended, beyond its table.
struct SweepEnd {
  // Set when kbd could not be reached, or refused every kernel: the
  // command fails with it (exit 2), as a refused submit does.
  absl::Status failed;
  // Set when the time ran out before every job was done (exit 2 after the
  // table, as for a submit that timed out).
  absl::Status timed_out;
};

// Whether `s` means kbd cannot be reached at all (the sweep ends).
bool Unreachable(const absl::Status& s, KbenchClient& client) {
  return s.code() == absl::StatusCode::kUnavailable && !client.Connected();
}

// Submits the kernels one after another, each once the previous one has
// finished, within one deadline for the whole sweep; the table as GetSweep
// would give it, with the wall time each submit took here.
SweepEnd RunSerial(const GlobalOptions& global, KbenchClient& client,
                   const SweepOptions& options,
                   const std::map<std::string, std::string>& sources,
                   v1::Sweep* sweep) {
  SweepEnd end;
  const absl::Time deadline = absl::Now() + absl::Seconds(global.timeout_s);
  int submitted_any = 0;
  absl::Status first_refusal;
  for (v1::SweepRow& row : *sweep->mutable_rows()) {
    if (row.filename().empty() || !end.timed_out.ok()) continue;
    const auto t0 = std::chrono::steady_clock::now();
    v1::SubmitJobRequest request;
    request.set_kind(sweep->kind());
    v1::KernelRequest* kernel = request.mutable_kernel();
    kernel->set_source(sources.at(row.filename()));
    kernel->set_filename(row.filename());
    kernel->set_problem(row.problem());
    kernel->set_session_id(options.session);
    absl::StatusOr<v1::SubmitJobResponse> submitted = client.SubmitJob(request);
    if (!submitted.ok()) {
      if (Unreachable(submitted.status(), client)) {
        end.failed = submitted.status();
        return end;
      }
      *row.mutable_error() = ToErrorProto(submitted.status());
      if (first_refusal.ok()) first_refusal = submitted.status();
      continue;
    }
    ++submitted_any;
    row.set_job_id(submitted->job().id());
    absl::StatusOr<v1::Job> job = WaitForJob(
        client, row.job_id(), deadline - absl::Now(), /*progress=*/nullptr);
    if (!job.ok()) {
      if (Unreachable(job.status(), client)) {
        end.failed = job.status();
        return end;
      }
      // Out of time: the row shows where its job stands, and no more
      // kernels are submitted (their wall times would include this one).
      end.timed_out = job.status();
      v1::GetJobRequest get;
      get.set_job_id(row.job_id());
      absl::StatusOr<v1::GetJobResponse> now = client.GetJob(get);
      if (now.ok()) FillSweepRow(now->job(), &row);
      continue;
    }
    FillSweepRow(*job, &row);
    row.set_wall_ms(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - t0)
                        .count());
  }
  if (submitted_any == 0 && !first_refusal.ok()) end.failed = first_refusal;
  SummarizeSweep(sweep);
  return end;
}

// Submits the kernels as one sweep and follows its jobs until each is
// done or the timeout passes; the table is GetSweep's.
SweepEnd RunBatch(const GlobalOptions& global, KbenchClient& client,
                  const SweepOptions& options,
                  const std::map<std::string, std::string>& sources,
                  v1::Sweep* sweep, std::ostream& err) {
  SweepEnd end;
  v1::SubmitSweepRequest request;
  request.set_suite(sweep->suite());
  request.set_kind(sweep->kind());
  for (const v1::SweepRow& row : sweep->rows()) {
    if (row.filename().empty()) continue;
    v1::KernelRequest* kernel = request.add_kernels();
    kernel->set_source(sources.at(row.filename()));
    kernel->set_filename(row.filename());
    kernel->set_problem(row.problem());
    kernel->set_session_id(options.session);
  }
  if (request.kernels().empty()) return end;
  absl::StatusOr<v1::SubmitSweepResponse> submitted =
      client.SubmitSweep(request);
  if (!submitted.ok()) {
    end.failed = submitted.status();
    return end;
  }
  const std::string& id = submitted->sweep().id();
  const int jobs = submitted->sweep().jobs();
  err << "sweep: " << id << " holds " << jobs << (jobs == 1 ? " job" : " jobs")
      << " (`kbctl watch JOB` follows one)\n";
  const absl::Time deadline = absl::Now() + absl::Seconds(global.timeout_s);
  for (const v1::SweepRow& row : submitted->sweep().rows()) {
    if (row.job_id().empty()) continue;
    absl::StatusOr<v1::Job> job =
        WaitForJob(client, row.job_id(), deadline - absl::Now(), nullptr);
    if (job.ok()) {
      err << "sweep: " << row.problem() << ": "
          << VerdictName(job->result().verdict()) << "\n";
      continue;
    }
    if (Unreachable(job.status(), client)) {
      end.failed = job.status();
      return end;
    }
    // Out of time: the table shows where every job stands.
    end.timed_out = job.status();
    break;
  }
  v1::GetSweepRequest get;
  get.set_sweep_id(id);
  absl::StatusOr<v1::GetSweepResponse> got = client.GetSweep(get);
  if (!got.ok()) {
    end.failed = got.status();
    return end;
  }
  *sweep = std::move(*got->mutable_sweep());
  return end;
}

}  // namespace

std::string FormatSweep(const v1::Sweep& sweep,
                        const std::vector<std::string>& notes) {
  const int n = sweep.rows_size();
  std::string out = absl::StrCat("sweep of suite ", sweep.suite(), ": ", n,
                                 n == 1 ? " problem\n\n" : " problems\n\n");
  absl::StrAppend(
      &out,
      "| problem | kernel | verdict | speedup | of floor | run | wall |\n"
      "|---|---|---|---:|---:|---:|---:|\n");
  for (const v1::SweepRow& r : sweep.rows()) {
    std::string speedup = "-", floor = "-";
    if (r.verdict() == v1::VERDICT_PASSED && r.speedup() > 0) {
      speedup = absl::StrFormat("%.2fx", r.speedup());
      if (r.floor_us() > 0 && r.kernel_us() > 0) {
        floor = absl::StrFormat("%.1f %%", 100 * r.floor_us() / r.kernel_us());
      }
    }
    absl::StrAppend(&out, "| ", r.problem(), " | ",
                    r.filename().empty() ? "-" : r.filename(), " | ",
                    RowState(r), " | ", speedup, " | ", floor, " | ",
                    Seconds(r.runner_ms()), " | ", Seconds(r.wall_ms()),
                    " |\n");
  }
  absl::StrAppend(
      &out, "\n",
      sweep.geomean_speedup() > 0
          ? absl::StrFormat("geomean speedup over the %d passed: %.2fx\n",
                            sweep.passed(), sweep.geomean_speedup())
          : std::string("geomean speedup: none passed\n"));
  // The wall times' median and largest (the upper median for an even
  // count): with --serial, one submit's latency.
  std::vector<double> walls;
  for (const v1::SweepRow& r : sweep.rows()) {
    if (r.wall_ms() > 0) walls.push_back(r.wall_ms());
  }
  if (!walls.empty()) {
    std::sort(walls.begin(), walls.end());
    absl::StrAppend(&out, absl::StrFormat("wall per job: p50 %.2f s, max "
                                          "%.2f s over %d\n",
                                          walls[walls.size() / 2] / 1000,
                                          walls.back() / 1000, walls.size()));
  }
  // Why each row that did not pass did not: its refusal, or its job's
  // one-line result.
  for (const v1::SweepRow& r : sweep.rows()) {
    if (r.error().code() != 0) {
      absl::StrAppend(&out, r.problem(), ": ", r.error().message(), "\n");
    } else if (r.stage() == v1::STAGE_DONE &&
               r.verdict() != v1::VERDICT_PASSED && !r.message().empty()) {
      absl::StrAppend(&out, r.problem(), ": ", RowState(r), ": ", r.message(),
                      "\n");
    }
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

  // The table to fill: a row per problem of the suite, with its file.
  v1::Sweep sweep;
  sweep.set_suite(options.suite);
  sweep.set_kind(v1::JOB_KIND_SUBMIT);
  std::set<std::string> in_suite;
  for (const v1::Problem& problem : problems->problems()) {
    in_suite.insert(problem.name());
  }
  for (const auto& [problem, file] : *files) {
    if (in_suite.count(problem) == 0) {
      notes.push_back(absl::StrCat(file, ": skipped, its problem '", problem,
                                   "' is not in suite '", options.suite, "'"));
    }
  }
  for (const v1::Problem& problem : problems->problems()) {
    v1::SweepRow* row = sweep.add_rows();
    row->set_problem(problem.name());
    auto file = files->find(problem.name());
    if (file != files->end()) {
      row->set_filename(file->second);
    } else {
      notes.push_back(absl::StrCat(problem.name(), ": no .cu file in ",
                                   options.dir, " has `// @kb problem ",
                                   problem.name(), "`"));
    }
  }
  const SweepEnd end =
      options.serial ? RunSerial(global, client, options, sources, &sweep)
                     : RunBatch(global, client, options, sources, &sweep, err);
  if (!end.failed.ok()) return FailCommand(end.failed, global, client, err);
  if (global.json) {
    const int printed = PrintJson(sweep, out, err);
    if (printed != kExitOk) return printed;
    for (const std::string& note : notes) err << "sweep: " << note << "\n";
  } else {
    out << FormatSweep(sweep, notes);
  }
  if (!end.timed_out.ok()) {
    return ReportError(end.timed_out, "", false, err);
  }
  bool all_passed = true;
  for (const v1::SweepRow& r : sweep.rows()) {
    all_passed &= !r.job_id().empty() && r.verdict() == v1::VERDICT_PASSED;
  }
  return all_passed ? kExitOk : kExitNotPassed;
}

}  // namespace kbench
