// The agent tools, defined once: names, descriptions and JSON input
// schemas; the mapping of JSON arguments onto kbench requests; and the
// results as compact text for a model plus structured JSON. `kbctl mcp`
// (MCP over stdio), kbd's HTTP tools (POST /v1/tools/{name}) and
// `kbctl tools --format openai|anthropic|mcp` all use this one source.
//
// Thread safety: the definitions are immutable; CallAgentTool is as thread
// safe as the backend it is given.
#ifndef KBENCH_AGENT_AGENT_TOOLS_H_
#define KBENCH_AGENT_AGENT_TOOLS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kbench/v1/kbench.pb.h"
#include "nlohmann/json.hpp"

namespace kbench {

struct AgentToolDef {
  std::string name;             // [a-z0-9_], at most 64 characters.
  std::string description;      // For the model: what it does, when to use it.
  nlohmann::json input_schema;  // JSON Schema of the arguments (an object).
};

// Every tool, in a stable order.
const std::vector<AgentToolDef>& AgentToolDefs();
// nullptr for an unknown name.
const AgentToolDef* FindAgentTool(absl::string_view name);

// The definitions as a function-calling format expects them:
//   "openai":    [{"type":"function","function":{name,description,parameters}}]
//   "anthropic": [{name, description, input_schema}]
//   "mcp":       {"tools":[{name, description, inputSchema}]}
// InvalidArgument for another format.
absl::StatusOr<nlohmann::json> RenderAgentTools(absl::string_view format);

// What the tools need from kbench; implemented over gRPC (kbctl) and
// in-process (kbd). Errors are the statuses kbench answers with.
class AgentToolBackend {
 public:
  virtual ~AgentToolBackend() = default;
  virtual absl::StatusOr<v1::GetGpuSpecsResponse> GetGpuSpecs(
      const std::string& session_id) = 0;
  virtual absl::StatusOr<v1::GetProblemResponse> GetProblem(
      const std::string& name, const std::string& session_id) = 0;
  // The problems of `suite` (every problem when empty), as ListProblems.
  virtual absl::StatusOr<v1::ListProblemsResponse> ListProblems(
      const std::string& suite) = 0;
  // Runs a job and waits for it: the finished job (whatever its verdict),
  // or the status its request was refused with.
  virtual absl::StatusOr<v1::Job> RunJob(v1::JobKind kind,
                                         const v1::KernelRequest& request) = 0;
  virtual absl::StatusOr<v1::CompareRunsResponse> CompareRuns(
      const std::string& session_id, int turn_a, int turn_b) = 0;
};

struct AgentToolResult {
  std::string text;           // Verdict first, labelled lines, units.
  nlohmann::json structured;  // The response or job as JSON (proto names).
  bool is_error = false;      // Not passed, or the request was refused.
};

// The MCP tools/call result (also the HTTP tools' reply body):
// {"content":[{"type":"text","text":...}],"structuredContent":{...},
//  "isError":bool}. structuredContent is always an object.
nlohmann::json ToMcpToolResult(AgentToolResult result);

// Calls tool `name` with `args` (a JSON object). `session_id` is used when
// the arguments carry none. Protocol mistakes are statuses: NotFound for an
// unknown tool, InvalidArgument for arguments that break the schema (with
// the argument's name). Everything the tool itself reports (a compile error,
// a wrong result, no GPU connected) is a result with is_error set and a
// message the model can act on.
absl::StatusOr<AgentToolResult> CallAgentTool(AgentToolBackend& backend,
                                              absl::string_view name,
                                              const nlohmann::json& args,
                                              const std::string& session_id);

}  // namespace kbench

#endif  // KBENCH_AGENT_AGENT_TOOLS_H_
