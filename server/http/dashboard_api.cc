#include "server/http/dashboard_api.h"

#include <google/protobuf/util/json_util.h>
#include <httplib.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "contract/names.h"
#include "server/http/http_json.h"

namespace kbench {
namespace {

using nlohmann::json;

// Protobuf JSON (proto field names, defaults printed) as a json value.
absl::StatusOr<json> ProtoJson(const google::protobuf::Message& m) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  const auto status =
      google::protobuf::util::MessageToJsonString(m, &text, options);
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat("rendering ", m.GetTypeName(),
                                            " as JSON: ", status.ToString()));
  }
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::InternalError(
        absl::StrCat("rendering ", m.GetTypeName(), " as JSON gave bad JSON"));
  }
  return j;
}

// A query value as quoted in error messages (cut short when long).
std::string Quoted(const std::string& value) {
  constexpr size_t kMax = 40;
  return absl::StrCat(
      "'", value.size() > kMax ? value.substr(0, kMax) + "..." : value, "'");
}

// The value of query parameter `name`; nullopt when absent.
// InvalidArgument when it is given more than once.
absl::StatusOr<std::optional<std::string>> Param(const httplib::Request& req,
                                                 const std::string& name) {
  const size_t n = req.get_param_value_count(name);
  if (n == 0) return std::nullopt;
  if (n > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "query parameter ", name, " is given ", n, " times; give it once"));
  }
  return req.get_param_value(name);
}

// Query parameter `name` as an integer in [lo, hi]; `fallback` when absent
// (InvalidArgument when absent without one). `what` says what it counts.
absl::StatusOr<int> IntParam(const httplib::Request& req,
                             const std::string& name, int lo, int hi,
                             std::optional<int> fallback,
                             const std::string& what) {
  ASSIGN_OR_RETURN(std::optional<std::string> value, Param(req, name));
  const std::string allowed = absl::StrCat(
      "an integer from ", lo, " to ", hi, " (", what,
      fallback.has_value() ? absl::StrCat("; default ", *fallback) : "", ")");
  if (!value.has_value()) {
    if (fallback.has_value()) return *fallback;
    return absl::InvalidArgumentError(absl::StrCat(
        "query parameter ", name, " is missing; it must be ", allowed));
  }
  int64_t n = 0;
  bool digits = !value->empty() && value->size() <= 18;
  for (size_t i = 0; digits && i < value->size(); ++i) {
    const char c = (*value)[i];
    digits = absl::ascii_isdigit(c) || (i == 0 && c == '-');
  }
  if (!digits || !absl::SimpleAtoi(*value, &n) || n < lo || n > hi) {
    return absl::InvalidArgumentError(absl::StrCat("query parameter ", name,
                                                   " must be ", allowed,
                                                   ", not ", Quoted(*value)));
  }
  return static_cast<int>(n);
}

// Query parameter `stage`: STAGE_UNSPECIFIED (no filter) when absent.
absl::StatusOr<v1::Stage> StageParam(const httplib::Request& req) {
  ASSIGN_OR_RETURN(std::optional<std::string> value, Param(req, "stage"));
  if (!value.has_value() || value->empty()) return v1::STAGE_UNSPECIFIED;
  const v1::Stage stages[] = {v1::STAGE_QUEUED, v1::STAGE_COMPILING,
                              v1::STAGE_WAITING_GPU, v1::STAGE_RUNNING,
                              v1::STAGE_DONE};
  for (v1::Stage s : stages) {
    if (*value == StageName(s)) return s;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "query parameter stage must be one of queued, compiling, waiting_gpu, "
      "running, done (or absent for every stage), not ",
      Quoted(*value)));
}

using Handler =
    std::function<absl::StatusOr<json>(const httplib::Request& req)>;

// Registers `handler` for GET `pattern`, and 405 for the other methods.
void Route(httplib::Server& s, const std::string& pattern,
           const std::string& usage, Handler handler) {
  s.Get(pattern, [handler = std::move(handler)](const httplib::Request& req,
                                                httplib::Response& res) {
    absl::StatusOr<json> body = handler(req);
    if (body.ok()) {
      ReplyJson(res, 200, *body);
    } else {
      ReplyStatus(res, body.status());
    }
  });
  RouteNonGetTo405(s, pattern, usage);
}

}  // namespace

void DashboardApi::Install(httplib::Server& s) {
  auto bind = [this](absl::StatusOr<json> (DashboardApi::*method)(
                  const httplib::Request&)) -> Handler {
    return [this, method](const httplib::Request& req) {
      return (this->*method)(req);
    };
  };
  Route(s, "/api/problems", "GET /api/problems?suite=S",
        bind(&DashboardApi::Problems));
  Route(s, "/api/workers", "GET /api/workers", bind(&DashboardApi::Workers));
  Route(s, "/api/jobs",
        "GET /api/jobs?session=&stage=&page_size=&page_token= to list jobs",
        bind(&DashboardApi::Jobs));
  Route(s, R"(/api/jobs/([^/]+))", "GET /api/jobs/{id}",
        bind(&DashboardApi::Job));
  Route(s, "/api/sessions", "GET /api/sessions?limit= to list sessions",
        bind(&DashboardApi::Sessions));
  Route(s, R"(/api/sessions/([^/]+))", "GET /api/sessions/{id}",
        bind(&DashboardApi::Session));
  Route(s, R"(/api/sessions/([^/]+)/compare)",
        "GET /api/sessions/{id}/compare?a=TURN&b=TURN",
        bind(&DashboardApi::Compare));
  Route(s, R"(/api/sources/([^/]+))", "GET /api/sources/{digest}",
        bind(&DashboardApi::Source));
  Route(s, R"(/api/sweeps/([^/]+))", "GET /api/sweeps/{id}",
        bind(&DashboardApi::Sweep));
}

absl::StatusOr<json> DashboardApi::Problems(const httplib::Request& req) {
  v1::ListProblemsRequest request;
  request.set_suite(req.get_param_value("suite"));
  ASSIGN_OR_RETURN(v1::ListProblemsResponse out, jobs_->ListProblems(request));
  return ProtoJson(out);
}

absl::StatusOr<json> DashboardApi::Workers(const httplib::Request&) {
  json workers = json::array();
  for (const WorkerRegistry::WorkerStats& w :
       workers_->LiveStats(absl::Now())) {
    ASSIGN_OR_RETURN(json j, ProtoJson(w.gpu));
    j["busy_seconds"] = w.busy_seconds;
    j["jobs_per_minute"] = w.jobs_per_minute;
    workers.push_back(std::move(j));
  }
  return json{{"queue_depth", scheduler_->QueueDepth()},
              {"workers", std::move(workers)}};
}

absl::StatusOr<json> DashboardApi::Jobs(const httplib::Request& req) {
  v1::ListJobsRequest r;
  ASSIGN_OR_RETURN(int page_size,
                   IntParam(req, "page_size", 1, 200, 20, "jobs per page"));
  ASSIGN_OR_RETURN(v1::Stage stage, StageParam(req));
  ASSIGN_OR_RETURN(std::optional<std::string> session, Param(req, "session"));
  ASSIGN_OR_RETURN(std::optional<std::string> token, Param(req, "page_token"));
  r.set_page_size(page_size);
  r.set_stage(stage);
  r.set_session_id(session.value_or(""));
  r.set_page_token(token.value_or(""));
  ASSIGN_OR_RETURN(v1::ListJobsResponse jobs, jobs_->ListJobs(r));
  return ProtoJson(jobs);
}

absl::StatusOr<json> DashboardApi::Job(const httplib::Request& req) {
  ASSIGN_OR_RETURN(v1::Job job, jobs_->GetJob(req.matches[1]));
  absl::StatusOr<std::string> source = jobs_->GetSource(job.source_digest());
  if (!source.ok() && !absl::IsNotFound(source.status())) {
    return source.status();
  }
  ASSIGN_OR_RETURN(json j, ProtoJson(job));
  return json{{"job", std::move(j)}, {"source", source.value_or("")}};
}

absl::StatusOr<json> DashboardApi::Sessions(const httplib::Request& req) {
  ASSIGN_OR_RETURN(int limit,
                   IntParam(req, "limit", 1, 200, 50, "sessions to list"));
  // One query: each session row carries its summary (best_speedup,
  // last_tool, last_verdict).
  ASSIGN_OR_RETURN(std::vector<v1::Session> list,
                   agent_->ListSessions(limit, /*strict=*/true));
  json sessions = json::array();
  for (const v1::Session& s : list) {
    ASSIGN_OR_RETURN(json j, ProtoJson(s));
    sessions.push_back(std::move(j));
  }
  return json{{"sessions", std::move(sessions)}};
}

absl::StatusOr<json> DashboardApi::Session(const httplib::Request& req) {
  ASSIGN_OR_RETURN(AgentService::SessionDetail detail,
                   agent_->GetSessionDetail(req.matches[1]));
  json out;
  ASSIGN_OR_RETURN(out["session"], ProtoJson(detail.session));
  out["problem"] = nullptr;
  if (detail.problem.has_value()) {
    ASSIGN_OR_RETURN(out["problem"], ProtoJson(*detail.problem));
  }
  json turns = json::array();
  for (const AgentService::SessionDetail::TurnDetail& t : detail.turns) {
    ASSIGN_OR_RETURN(json j, ProtoJson(t.turn));
    if (t.job.has_value()) {
      ASSIGN_OR_RETURN(j["job"], ProtoJson(*t.job));
    }
    turns.push_back(std::move(j));
  }
  out["turns"] = std::move(turns);
  return out;
}

absl::StatusOr<json> DashboardApi::Compare(const httplib::Request& req) {
  constexpr int kMax = std::numeric_limits<int>::max();
  ASSIGN_OR_RETURN(int a, IntParam(req, "a", 1, kMax, std::nullopt,
                                   "the first turn's number"));
  ASSIGN_OR_RETURN(int b, IntParam(req, "b", 1, kMax, std::nullopt,
                                   "the second turn's number"));
  ASSIGN_OR_RETURN(v1::CompareRunsResponse cmp,
                   agent_->CompareRuns(req.matches[1], a, b,
                                       /*record_turn=*/false));
  return ProtoJson(cmp);
}

absl::StatusOr<json> DashboardApi::Source(const httplib::Request& req) {
  const std::string digest = req.matches[1];
  ASSIGN_OR_RETURN(std::string text, jobs_->GetSource(digest));
  return json{{"digest", digest}, {"text", std::move(text)}};
}

absl::StatusOr<json> DashboardApi::Sweep(const httplib::Request& req) {
  ASSIGN_OR_RETURN(v1::Sweep sweep, sweeps_->Get(req.matches[1]));
  return ProtoJson(sweep);
}

}  // namespace kbench
