#include "client/session_commands.h"

#include <signal.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "agent/agent_report.h"
#include "agent/agent_tools.h"
#include "base/logging.h"
#include "client/grpc_tool_backend.h"
#include "client/kbench_client.h"
#include "client/mcp_server.h"
#include "google/protobuf/util/json_util.h"
#include "report/report_text.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

std::string Utc(int64_t unix_ms) {
  if (unix_ms <= 0) return "-";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixMillis(unix_ms),
                          absl::UTCTimeZone());
}

std::string SessionLine(const v1::Session& s) {
  return absl::StrFormat("%-24s %-22s %-10s %5d  %-20s %s\n", s.id(),
                         s.problem().empty() ? "-" : s.problem(), s.status(),
                         s.turns(), Utc(s.created_unix_ms()),
                         Utc(s.updated_unix_ms()));
}

}  // namespace

int RunMcp(const GlobalOptions& global, const McpOptions& options,
           std::istream& in, std::ostream& out) {
  // stdout carries the protocol alone: logs go to stderr, and a reader that
  // closes the pipe ends the server through a failed write, not SIGPIPE.
  if (spdlog::get("kbctl") == nullptr) InitLogging("kbctl", options.log_level);
  signal(SIGPIPE, SIG_IGN);
  KbenchClient client(global.server, UnaryTimeout(global));
  GrpcToolBackend backend(&client, absl::Seconds(global.timeout_s));
  McpServer server(backend, &client, {options.session, options.problem});
  spdlog::info("kbctl mcp: serving the kbench tools for kbd at {} on stdio",
               global.server);
  const int code = server.Serve(in, out);
  if (!server.session_id().empty()) {
    spdlog::info("kbctl mcp: session {}", server.session_id());
  }
  return code;
}

int RunTools(const std::string& format, std::ostream& out, std::ostream& err) {
  absl::StatusOr<nlohmann::json> tools = RenderAgentTools(format);
  if (!tools.ok()) return ReportError(tools.status(), "", false, err);
  out << tools->dump(2) << "\n";
  return kExitOk;
}

int RunDiff(const GlobalOptions& global, const std::string& session, int turn_a,
            int turn_b, std::ostream& out, std::ostream& err) {
  KbenchClient client(global.server, UnaryTimeout(global));
  v1::CompareRunsRequest request;
  request.set_session_id(session);
  request.set_turn_a(turn_a);
  request.set_turn_b(turn_b);
  absl::StatusOr<v1::CompareRunsResponse> response =
      client.CompareRuns(request);
  if (!response.ok())
    return FailCommand(response.status(), global, client, err);
  if (global.json) return PrintJson(*response, out, err);
  out << AgentCompareText(*response);
  return kExitOk;
}

int RunSessionCreate(const GlobalOptions& global, const std::string& problem,
                     std::ostream& out, std::ostream& err) {
  KbenchClient client(global.server, UnaryTimeout(global));
  v1::CreateSessionRequest request;
  request.set_problem(problem);
  absl::StatusOr<v1::CreateSessionResponse> response =
      client.CreateSession(request);
  if (!response.ok())
    return FailCommand(response.status(), global, client, err);
  if (global.json) return PrintJson(*response, out, err);
  out << response->session().id() << "\n";
  return kExitOk;
}

int RunSessionShow(const GlobalOptions& global, const std::string& id,
                   std::ostream& out, std::ostream& err) {
  KbenchClient client(global.server, UnaryTimeout(global));
  v1::GetSessionRequest request;
  request.set_session_id(id);
  absl::StatusOr<v1::GetSessionResponse> response = client.GetSession(request);
  if (!response.ok())
    return FailCommand(response.status(), global, client, err);
  if (global.json) return PrintJson(*response, out, err);
  const v1::Session& s = response->session();
  out << "session " << s.id() << ": problem "
      << (s.problem().empty() ? "-" : s.problem()) << ", " << s.status() << ", "
      << s.turns() << " turn(s), created " << Utc(s.created_unix_ms())
      << ", updated " << Utc(s.updated_unix_ms()) << "\n";
  if (response->turns().empty()) {
    out << "no turns yet\n";
    return kExitOk;
  }
  out << absl::StrFormat("%4s  %-16s %-14s %12s  %s\n", "SEQ", "TOOL",
                         "VERDICT", "DURATION", "JOB");
  for (const v1::Turn& t : response->turns()) {
    out << absl::StrFormat("%4d  %-16s %-14s %9.0f ms  %s\n", t.seq(), t.tool(),
                           VerdictName(t.verdict()), t.duration_ms(),
                           t.job_id().empty() ? "-" : t.job_id());
  }
  return kExitOk;
}

int RunSessionList(const GlobalOptions& global, int limit, std::ostream& out,
                   std::ostream& err) {
  KbenchClient client(global.server, UnaryTimeout(global));
  v1::ListSessionsRequest request;
  request.set_limit(limit);
  absl::StatusOr<v1::ListSessionsResponse> response =
      client.ListSessions(request);
  if (!response.ok())
    return FailCommand(response.status(), global, client, err);
  if (global.json) return PrintJson(*response, out, err);
  if (response->sessions().empty()) {
    out << "no sessions\n";
    return kExitOk;
  }
  out << absl::StrFormat("%-24s %-22s %-10s %5s  %-20s %s\n", "ID", "PROBLEM",
                         "STATUS", "TURNS", "CREATED (UTC)", "UPDATED (UTC)");
  for (const v1::Session& s : response->sessions()) out << SessionLine(s);
  return kExitOk;
}

}  // namespace kbench
