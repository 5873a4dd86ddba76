#include "worker/sanitizer_runner.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/process/child_process.h"
#include "contract/job_defaults.h"
#include "spdlog/spdlog.h"
#include "worker/sanitizer_output.h"

namespace kbench {
namespace {

constexpr const char* kTools[] = {"memcheck", "racecheck", "initcheck"};
constexpr int kErrorExitCode = 86;  // --error-exitcode: findings reported.

bool IsExecutable(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         access(path.c_str(), X_OK) == 0;
}

std::string ReadFile(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::string data(max_bytes, '\0');
  in.read(&data[0], static_cast<std::streamsize>(max_bytes));
  data.resize(static_cast<size_t>(in.gcount()));
  return data;
}

std::string Tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : "..." + s.substr(s.size() - n);
}

// A finding inside the candidate (its file, or one of its entry points), as
// opposed to the harness's reference and helper kernels.
bool InCandidate(const v1::SanitizeFinding& f, const std::string& filename,
                 const std::set<std::string>& entries) {
  if (!f.source_line().empty()) return true;
  const size_t slash = f.file().find_last_of('/');
  const std::string base =
      slash == std::string::npos ? f.file() : f.file().substr(slash + 1);
  if (!base.empty() && base == filename) return true;
  for (const std::string& e : entries) {
    if (!e.empty() && absl::StrContains(f.kernel(), e)) return true;
  }
  return false;
}

std::string Describe(const v1::SanitizeFinding& f) {
  std::string s = absl::StrCat(f.tool(), ": ", f.kind());
  if (!f.kernel().empty()) absl::StrAppend(&s, " in ", f.kernel());
  if (f.line() > 0) absl::StrAppend(&s, " at ", f.file(), ":", f.line());
  if (!f.source_line().empty()) absl::StrAppend(&s, " `", f.source_line(), "`");
  return s;
}

}  // namespace

absl::StatusOr<std::string> SanitizerRunner::FindSanitizer(
    const std::string& explicit_path) {
  if (!explicit_path.empty()) {
    if (IsExecutable(explicit_path)) return explicit_path;
    return absl::NotFoundError(
        absl::StrCat("compute-sanitizer was configured as '", explicit_path,
                     "', which is not an executable file"));
  }
  std::vector<std::string> dirs;
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) {
    dirs.push_back(absl::StrCat(home, "/bin"));
  }
  dirs.push_back("/usr/local/cuda/bin");
  if (const char* path = std::getenv("PATH"); path && *path) {
    for (absl::string_view d : absl::StrSplit(path, ':', absl::SkipEmpty())) {
      dirs.emplace_back(d);
    }
  }
  for (const std::string& d : dirs) {
    const std::string candidate = d + "/compute-sanitizer";
    if (IsExecutable(candidate)) return candidate;
  }
  return absl::NotFoundError(absl::StrCat(
      "no compute-sanitizer in $CUDA_HOME/bin, /usr/local/cuda/bin or $PATH"));
}

absl::StatusOr<std::vector<std::string>> SanitizerRunner::ToolsOf(
    const v1::RunnerJob& job) {
  std::set<std::string> asked;
  for (const std::string& t : job.sanitize_tools()) {
    bool known = false;
    for (const char* k : kTools) known = known || t == k;
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown sanitizer tool '", t,
                       "'; use memcheck, racecheck or initcheck"));
    }
    asked.insert(t);
  }
  std::vector<std::string> tools;
  for (const char* k : kTools) {
    if (asked.empty() || asked.count(k)) tools.push_back(k);
  }
  return tools;
}

v1::RunnerJob SanitizerRunner::SmallJob(const v1::RunnerJob& job) {
  v1::RunnerJob small = job;
  small.set_kind(v1::JOB_KIND_SANITIZE);
  small.set_trials(1);
  small.clear_check_sets();
  for (const v1::ShapeSet& set : job.check_sets()) {
    if (set.shapes().empty()) continue;
    v1::ShapeSet* s = small.add_check_sets();
    *s = set;
    s->clear_shapes();
    *s->add_shapes() = set.shapes(0);
    break;
  }
  return small;
}

v1::JobResult SanitizerRunner::Run(
    const v1::RunnerJob& job,
    const std::function<void(const std::string&)>& progress,
    const std::atomic<bool>* cancel) {
  v1::JobResult result;
  auto fail = [&](v1::Verdict verdict, absl::StatusCode code,
                  const std::string& message) {
    result.set_verdict(verdict);
    result.mutable_error()->set_code(static_cast<int>(code));
    result.mutable_error()->set_message(message);
    result.set_message(message);
    return result;
  };
  absl::StatusOr<std::string> sanitizer =
      FindSanitizer(options_.sanitizer_path);
  if (!sanitizer.ok()) {
    return fail(
        v1::VERDICT_ERROR, absl::StatusCode::kFailedPrecondition,
        absl::StrCat("compute-sanitizer is not installed on worker ",
                     options_.worker_id, " (", sanitizer.status().message(),
                     "). sanitize_kernel needs the CUDA toolkit's "
                     "compute-sanitizer on the worker (kbworker "
                     "--compute-sanitizer PATH); run_correctness still "
                     "works"));
  }
  absl::StatusOr<std::vector<std::string>> tools = ToolsOf(job);
  if (!tools.ok()) {
    return fail(v1::VERDICT_ERROR, absl::StatusCode::kInvalidArgument,
                std::string(tools.status().message()));
  }
  const v1::RunnerJob small = SmallJob(job);
  v1::SanitizeReport* report = result.mutable_sanitize();
  report->set_sanitizer_path(*sanitizer);
  if (small.check_sets_size() > 0) {
    report->set_shape_set(small.check_sets(0).name());
    report->set_shape(small.check_sets(0).shapes(0).name());
  }
  // The plan kbd parsed (the runner under the sanitizer checks it); only
  // its entry names are needed here, to tell the kernel's findings from the
  // harness's.
  std::set<std::string> entries;
  for (const v1::LaunchSpec& l : job.plan().launches()) {
    entries.insert(l.entry());
  }
  const std::string filename =
      job.filename().empty() ? kDefaultKernelFileName : job.filename();

  std::string base = options_.temp_dir;
  if (base.empty()) {
    const char* t = std::getenv("TMPDIR");
    base = t && *t ? t : "/tmp";
  }
  std::string dir_template = base + "/kbsanitize.XXXXXX";
  if (mkdtemp(&dir_template[0]) == nullptr) {
    return fail(v1::VERDICT_ERROR, absl::StatusCode::kInternal,
                absl::StrCat("cannot create a directory under ", base, ": ",
                             std::strerror(errno)));
  }
  const std::string dir = dir_template;
  const std::string job_path = dir + "/job.pb";
  {
    std::ofstream out(job_path, std::ios::binary);
    if (!out || !small.SerializeToOstream(&out)) {
      return fail(v1::VERDICT_ERROR, absl::StatusCode::kInternal,
                  "cannot write the sanitizer's job file in " + dir);
    }
  }

  const absl::Duration budget = std::min(
      std::max(absl::Milliseconds(job.budget_ms()), options_.min_tool_budget),
      options_.max_tool_budget);
  bool first = true, timed_out = false, cancelled = false;
  std::string incomplete;  // Why a tool's run did not complete.
  std::string output;      // The runners' stdout (device printf).
  for (size_t i = 0; i < tools->size() && !cancelled; ++i) {
    const std::string& tool = (*tools)[i];
    progress(absl::StrCat(tool, " (", i + 1, "/", tools->size(), ")"));
    const std::string log_path = absl::StrCat(dir, "/", tool, ".log");
    const std::string out_path = absl::StrCat(dir, "/", tool, ".result.pb");
    std::vector<std::string> args = {
        "--tool", tool, "--print-limit", "20",
        // The harness's own API probes (e.g.
        // counting a kernel's parameters) are
        // not the kernel's findings.
        "--report-api-errors", "no", "--log-file", log_path, "--error-exitcode",
        std::to_string(kErrorExitCode), options_.runner_path, "--oneshot",
        job_path, out_path};
    args.insert(args.end(), options_.runner_args.begin(),
                options_.runner_args.end());
    v1::SanitizeToolRun* run = report->add_runs();
    run->set_tool(tool);
    run->set_exit_code(-1);
    const auto t0 = std::chrono::steady_clock::now();
    internal::ChildProcess child(absl::Seconds(5));
    int sock = -1, out_fd = -1;
    absl::Status spawned =
        child.Spawn(*sanitizer, args, options_.env, &sock, &out_fd);
    const absl::Time deadline = absl::Now() + budget;
    char buf[4096];
    while (spawned.ok()) {
      for (ssize_t n; (n = read(out_fd, buf, sizeof(buf))) > 0;) {
        if (output.size() < options_.max_output_bytes) {
          output.append(buf, static_cast<size_t>(n));
        }
      }
      child.TryReap();
      if (child.reaped()) break;
      if (cancel != nullptr && *cancel) {
        cancelled = true;
        child.Kill();
        break;
      }
      if (absl::Now() > deadline) {
        timed_out = true;
        run->set_timed_out(true);
        child.Kill();
        break;
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
    if (sock >= 0) close(sock);
    if (out_fd >= 0) close(out_fd);
    run->set_wall_ms(std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - t0)
                         .count());
    if (!spawned.ok()) {
      return fail(
          v1::VERDICT_ERROR, absl::StatusCode::kFailedPrecondition,
          absl::StrCat("cannot start ", *sanitizer, ": ", spawned.message()));
    }
    const int ws = child.wait_status();
    if (ws != -1 && WIFEXITED(ws)) run->set_exit_code(WEXITSTATUS(ws));
    const std::string log = ReadFile(log_path, options_.max_log_bytes);
    SanitizerParse parsed =
        ParseSanitizerOutput(tool, log, filename, job.source());
    run->set_summary(parsed.summary);
    int kept = 0, harness = 0;
    for (v1::SanitizeFinding& f : parsed.findings) {
      if (InCandidate(f, filename, entries)) {
        *report->add_findings() = std::move(f);
        ++kept;
      } else {
        ++harness;
      }
    }
    run->set_findings(kept);
    if (harness > 0) {
      spdlog::info("job {}: {} ignored {} finding(s) outside the kernel",
                   job.job_id(), tool, harness);
    }
    if (timed_out || (kept == 0 && run->exit_code() != 0)) {
      run->set_log_tail(Tail(log, 2000));
    }
    if (!timed_out && !cancelled && kept == 0 &&
        access(out_path.c_str(), F_OK) != 0) {
      // The runner never wrote its result: the sanitizer could not run it.
      run->set_log_tail(Tail(log, 2000));
      incomplete = absl::StrCat(
          "compute-sanitizer ", tool, " did not run the kernel to the end (",
          child.EndDescription(), "); its output ends: ", Tail(log, 600));
      break;
    }
    if (first) {
      first = false;
      v1::JobResult oneshot;
      std::ifstream in(out_path, std::ios::binary);
      if (in && oneshot.ParseFromIstream(&in)) {
        if (oneshot.has_compile())
          *result.mutable_compile() = oneshot.compile();
        *result.mutable_correctness() = oneshot.correctness();
        if (oneshot.has_gpu()) *result.mutable_gpu() = oneshot.gpu();
        const v1::Verdict v = oneshot.verdict();
        if (kept == 0 &&
            (v == v1::VERDICT_COMPILE_ERROR || v == v1::VERDICT_REJECTED ||
             v == v1::VERDICT_ERROR)) {
          // Nothing to sanitize: the kernel did not get to run.
          result.set_verdict(v);
          *result.mutable_error() = oneshot.error();
          result.set_message(oneshot.message());
          break;
        }
      }
    }
    if (timed_out) break;
  }
  if (!output.empty()) result.set_log(absl::StrCat("kernel stdout:\n", output));
  unlink(job_path.c_str());
  for (const std::string& t : *tools) {
    unlink(absl::StrCat(dir, "/", t, ".log").c_str());
    unlink(absl::StrCat(dir, "/", t, ".result.pb").c_str());
  }
  rmdir(dir.c_str());

  if (result.verdict() != v1::VERDICT_UNSPECIFIED) return result;
  if (cancelled) {
    result.set_verdict(v1::VERDICT_CANCELLED);
    result.set_message("cancelled by a caller; the sanitizer was stopped");
  } else if (report->findings_size() > 0) {
    result.set_verdict(v1::VERDICT_FAILED);
    std::string msg = Describe(report->findings(0));
    if (report->findings_size() > 1) {
      absl::StrAppend(&msg, " (and ", report->findings_size() - 1,
                      " more finding(s))");
    }
    result.set_message(msg);
  } else if (!incomplete.empty()) {
    result.set_verdict(v1::VERDICT_ERROR);
    result.mutable_error()->set_code(
        static_cast<int>(absl::StatusCode::kInternal));
    result.mutable_error()->set_message(incomplete);
    result.set_message(incomplete);
  } else if (timed_out) {
    result.set_verdict(v1::VERDICT_TIMED_OUT);
    result.set_message(absl::StrCat(
        report->runs(report->runs_size() - 1).tool(), " ran past ",
        absl::FormatDuration(budget),
        " and was killed; sanitizers are 10-100x slower than a plain run, so "
        "make the shape smaller (shape_set)"));
  } else {
    result.set_verdict(v1::VERDICT_PASSED);
  }
  return result;
}

}  // namespace kbench
