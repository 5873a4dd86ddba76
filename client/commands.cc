#include "client/commands.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "agent/agent_report.h"
#include "client/job_waiter.h"
#include "client/kbench_client.h"
#include "client/progress.h"
#include "google/protobuf/util/json_util.h"
#include "report/report_text.h"

namespace kbench {
namespace {

std::string Basename(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Waits for a job, then prints its report; the exit code follows the
// verdict.
int WaitAndReport(const GlobalOptions& global, KbenchClient& client,
                  const std::string& job_id, std::ostream& out,
                  std::ostream& err) {
  absl::StatusOr<v1::Job> job;
  {
    ProgressReporter progress(err, global.err_is_tty);
    job =
        WaitForJob(client, job_id, absl::Seconds(global.timeout_s), &progress);
  }
  if (!job.ok()) return FailCommand(job.status(), global, client, err);
  const int code = ExitCodeForVerdict(job->result().verdict());
  if (global.json) {
    const int printed = PrintJson(*job, out, err);
    return printed != kExitOk ? printed : code;
  }
  out << FormatJob(*job)
      << AgentSanitizeText(job->result().sanitize(), job->filename());
  return code;
}

bool ParseStage(const std::string& name, v1::Stage* stage) {
  for (v1::Stage s :
       {v1::STAGE_QUEUED, v1::STAGE_COMPILING, v1::STAGE_WAITING_GPU,
        v1::STAGE_RUNNING, v1::STAGE_DONE}) {
    if (StageName(s) == name) {
      *stage = s;
      return true;
    }
  }
  return false;
}

}  // namespace

// Calls that return at once (submit, status, list, ...) wait at most this
// long, or --timeout when it is shorter.
constexpr double kUnaryTimeoutS = 60;

absl::Duration UnaryTimeout(const GlobalOptions& global) {
  return absl::Seconds(std::min(global.timeout_s, kUnaryTimeoutS));
}

int FailCommand(const absl::Status& status, const GlobalOptions& global,
                const KbenchClient& client, std::ostream& err) {
  const bool unreachable =
      status.code() == absl::StatusCode::kUnavailable && !client.Connected();
  return ReportError(status, global.server, unreachable, err);
}

// Writes `message` as one line of JSON (proto field names, defaults shown).
int PrintJson(const google::protobuf::Message& message, std::ostream& out,
              std::ostream& err) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  const auto status =
      google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!status.ok()) {
    return ReportError(
        absl::InternalError(absl::StrCat("cannot print the response as JSON: ",
                                         status.ToString())),
        "", false, err);
  }
  out << json << "\n";
  return kExitOk;
}

int ExitCodeForVerdict(v1::Verdict verdict) {
  switch (verdict) {
    case v1::VERDICT_PASSED:
      return kExitOk;
    case v1::VERDICT_FAILED:
    case v1::VERDICT_CRASHED:
    case v1::VERDICT_TIMED_OUT:
    case v1::VERDICT_REJECTED:
    case v1::VERDICT_COMPILE_ERROR:
    case v1::VERDICT_CANCELLED:
      return kExitNotPassed;
    default:
      return kExitError;
  }
}

absl::StatusOr<std::string> ReadSourceFile(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    return absl::NotFoundError(absl::StrCat("cannot read kernel file '", path,
                                            "': ", std::strerror(errno)));
  }
  if (S_ISDIR(info.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", path, "' is a directory; give the path of a .cu file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot read kernel file '", path, "': ", std::strerror(errno)));
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) {
    return absl::DataLossError(
        absl::StrCat("error while reading kernel file '", path, "'"));
  }
  if (contents.str().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel file '", path, "' is empty"));
  }
  return contents.str();
}

int ReportError(const absl::Status& status, const std::string& server,
                bool unreachable, std::ostream& err) {
  std::string message(status.message());
  if (status.code() == absl::StatusCode::kUnavailable && unreachable) {
    message = absl::StrCat(
        "cannot reach kbd at ", server, " (", message,
        "); start it with `make demo` (kbd and a worker) or run `kbd`, or "
        "point --server or KBENCH_SERVER at a running server");
  }
  err << "kbctl: " << StatusCodeName(static_cast<int>(status.code())) << ": "
      << message << "\n";
  return kExitError;
}

int RunKernelCommand(const GlobalOptions& global, v1::JobKind kind,
                     const KernelOptions& options, std::ostream& out,
                     std::ostream& err) {
  absl::StatusOr<std::string> source = ReadSourceFile(options.file);
  if (!source.ok()) return ReportError(source.status(), "", false, err);

  v1::SubmitJobRequest request;
  request.set_kind(kind);
  v1::KernelRequest* kernel = request.mutable_kernel();
  kernel->set_source(*std::move(source));
  kernel->set_filename(Basename(options.file));
  kernel->set_problem(options.problem);
  kernel->set_shape_set(options.shape_set);
  kernel->set_session_id(options.session);
  kernel->set_trials(options.trials);
  kernel->set_arch(options.arch);
  kernel->set_hot_l2(options.hot_l2);
  kernel->set_profile_preset(options.profile_preset);
  for (const std::string& tool : options.sanitize_tools) {
    kernel->add_sanitize_tools(tool);
  }

  KbenchClient client(global.server, UnaryTimeout(global));
  absl::StatusOr<v1::SubmitJobResponse> submitted = client.SubmitJob(request);
  if (!submitted.ok()) {
    return FailCommand(submitted.status(), global, client, err);
  }
  const v1::Job& job = submitted->job();
  if (options.no_wait) {
    if (global.json) return PrintJson(job, out, err);
    out << job.id() << "\n";
    return kExitOk;
  }
  return WaitAndReport(global, client, job.id(), out, err);
}

int RunSpecs(const GlobalOptions& global, std::ostream& out,
             std::ostream& err) {
  KbenchClient client(global.server, UnaryTimeout(global));
  absl::StatusOr<v1::GetGpuSpecsResponse> specs =
      client.GetGpuSpecs(v1::GetGpuSpecsRequest());
  if (!specs.ok()) return FailCommand(specs.status(), global, client, err);
  if (global.json) return PrintJson(*specs, out, err);
  out << FormatGpuSpecs(*specs);
  return kExitOk;
}

int RunStatus(const GlobalOptions& global, const std::string& job_id,
              std::ostream& out, std::ostream& err) {
  KbenchClient client(global.server, UnaryTimeout(global));
  v1::GetJobRequest request;
  request.set_job_id(job_id);
  absl::StatusOr<v1::GetJobResponse> response = client.GetJob(request);
  if (!response.ok()) {
    return FailCommand(response.status(), global, client, err);
  }
  const v1::Job& job = response->job();
  const int code = job.stage() == v1::STAGE_DONE
                       ? ExitCodeForVerdict(job.result().verdict())
                       : kExitOk;
  if (global.json) {
    const int printed = PrintJson(job, out, err);
    return printed != kExitOk ? printed : code;
  }
  out << FormatJob(job)
      << AgentSanitizeText(job.result().sanitize(), job.filename());
  return code;
}

int RunWatch(const GlobalOptions& global, const std::string& job_id,
             std::ostream& out, std::ostream& err) {
  KbenchClient client(global.server, UnaryTimeout(global));
  return WaitAndReport(global, client, job_id, out, err);
}

int RunList(const GlobalOptions& global, const ListOptions& options,
            std::ostream& out, std::ostream& err) {
  v1::ListJobsRequest request;
  request.set_page_size(options.limit);
  request.set_page_token(options.page_token);
  request.set_session_id(options.session);
  if (!options.stage.empty()) {
    v1::Stage stage;
    if (!ParseStage(options.stage, &stage)) {
      return ReportError(
          absl::InvalidArgumentError(absl::StrCat(
              "unknown stage '", options.stage,
              "'; use queued, compiling, waiting_gpu, running or done")),
          "", false, err);
    }
    request.set_stage(stage);
  }
  KbenchClient client(global.server, UnaryTimeout(global));
  absl::StatusOr<v1::ListJobsResponse> response = client.ListJobs(request);
  if (!response.ok()) {
    return FailCommand(response.status(), global, client, err);
  }
  if (global.json) return PrintJson(*response, out, err);
  out << FormatJobList(*response);
  return kExitOk;
}

int RunProblems(const GlobalOptions& global, const std::string& name,
                const std::string& suite, bool verbose, std::ostream& out,
                std::ostream& err) {
  KbenchClient client(global.server, UnaryTimeout(global));
  v1::ListProblemsRequest request;
  request.set_suite(suite);
  absl::StatusOr<v1::ListProblemsResponse> response =
      client.ListProblems(request);
  if (!response.ok()) {
    return FailCommand(response.status(), global, client, err);
  }
  if (name.empty()) {
    if (global.json) return PrintJson(*response, out, err);
    if (response->problems().empty()) out << "no problems are loaded\n";
    for (int i = 0; i < response->problems_size(); ++i) {
      if (i > 0) out << "\n";
      out << FormatProblem(response->problems(i), verbose);
    }
    out << "\nsuites: "
        << (response->suites().empty()
                ? std::string("(none)")
                : absl::StrJoin(response->suites(), ", "))
        << "\n";
    for (const v1::RefusedProblem& refused : response->refused()) {
      out << "refused at kbd start: " << refused.error() << "\n";
    }
    return kExitOk;
  }
  std::vector<std::string> names;
  for (const v1::Problem& problem : response->problems()) {
    if (problem.name() == name) {
      if (global.json) return PrintJson(problem, out, err);
      out << FormatProblem(problem, verbose);
      return kExitOk;
    }
    names.push_back(problem.name());
  }
  return ReportError(
      absl::NotFoundError(absl::StrCat(
          "no problem named '", name, "'; available: ",
          names.empty() ? std::string("none") : absl::StrJoin(names, ", "))),
      global.server, false, err);
}

int RunCancel(const GlobalOptions& global, const std::string& job_id,
              std::ostream& out, std::ostream& err) {
  KbenchClient client(global.server, UnaryTimeout(global));
  v1::CancelJobRequest request;
  request.set_job_id(job_id);
  absl::StatusOr<v1::CancelJobResponse> response = client.CancelJob(request);
  if (!response.ok()) {
    return FailCommand(response.status(), global, client, err);
  }
  if (global.json) return PrintJson(response->job(), out, err);
  out << FormatJob(response->job())
      << AgentSanitizeText(response->job().result().sanitize(),
                           response->job().filename());
  return kExitOk;
}

}  // namespace kbench
