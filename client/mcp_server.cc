#include "client/mcp_server.h"

#include <exception>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/untrusted_input.h"
#include "contract/names.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

using nlohmann::json;

constexpr char kInstructions[] =
    "kbench compiles, checks, times and profiles CUDA kernels on a real GPU. "
    "Call get_problem first: it states the problem, the entry point's "
    "signature and the kernel contract with a complete example. Then "
    "iterate: compile_kernel after every edit (cheap, no GPU), "
    "run_correctness until it passes, profile_kernel to see where the time "
    "goes, and submit_kernel once for the final answer. get_gpu_specs "
    "describes the GPU; compare_runs shows what changed between two turns; "
    "list_problems lists the problems of a suite. "
    "A result with isError true is the tool's report (a compile error, a "
    "wrong result): read it and fix the kernel.";

json Reply(const json& id, json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json ErrorReply(const json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"},
          {"id", id},
          {"error", {{"code", code}, {"message", message}}}};
}

std::string ToolNames() {
  std::vector<std::string> names;
  for (const AgentToolDef& def : AgentToolDefs()) names.push_back(def.name);
  return absl::StrJoin(names, ", ");
}

// The line as it is logged: its start only.
// The line as it is logged: its start only, with control characters shown
// as '?' so a message cannot forge log lines.
std::string Excerpt(const std::string& line) {
  std::string out = line.substr(0, 200);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return line.size() <= 200 ? out : out + "...";
}

}  // namespace

McpServer::McpServer(AgentToolBackend& backend, KbenchClient* client,
                     McpServerOptions options)
    : backend_(backend),
      client_(client),
      options_(std::move(options)),
      session_id_(options_.session_id) {
  if (!session_id_.empty()) {
    spdlog::info("kbctl mcp: recording tool calls in session {}", session_id_);
  }
}

json McpServer::ParseErrorReply(const std::string& detail) {
  return ErrorReply(
      nullptr, kJsonRpcParseError,
      absl::StrCat("Parse error: the line is not valid JSON (", detail,
                   "); send one JSON-RPC 2.0 message per line"));
}

int McpServer::Serve(std::istream& in, std::ostream& out) {
  // One message per line, read with a bound: a line longer than the limit
  // is skipped to its end and answered with an error, never buffered whole.
  const JsonLimits limits;
  std::string line;
  std::vector<char> buf(limits.max_bytes + 2);
  while (true) {
    in.getline(buf.data(), static_cast<std::streamsize>(buf.size()));
    bool too_long = false;
    if (in.fail() && !in.eof() &&
        in.gcount() == static_cast<std::streamsize>(buf.size()) - 1) {
      too_long = true;  // Filled the buffer without reaching the newline.
      in.clear();
      in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
    } else if (in.fail() && in.gcount() == 0) {
      break;  // End of input.
    }
    line.assign(buf.data());
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::optional<json> reply;
    if (too_long) {
      spdlog::warn("kbctl mcp: a message over {} bytes was skipped",
                   limits.max_bytes);
      reply = ErrorReply(nullptr, kJsonRpcInvalidRequest,
                         absl::StrCat("the message is over ", limits.max_bytes,
                                      " bytes; kernel sources are at most "
                                      "256 KiB"));
    } else if (line.find_first_not_of(" \t") == std::string::npos) {
      if (in.eof()) break;
      continue;
    } else {
      absl::StatusOr<json> message = ParseUntrustedJson(line, limits);
      if (!message.ok()) {
        spdlog::warn("kbctl mcp: unparsable message: {}", Excerpt(line));
        reply = ParseErrorReply(std::string(message.status().message()));
      } else {
        reply = Handle(*message);
      }
    }
    if (!reply.has_value()) {
      if (in.eof()) break;
      continue;
    }
    // Invalid UTF-8 (from a kernel's source, say) is replaced, never thrown.
    out << reply->dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
    out.flush();
    if (!out) {
      spdlog::error("kbctl mcp: cannot write to the output; exiting");
      return 2;
    }
    if (in.eof()) break;
  }
  spdlog::info("kbctl mcp: end of input; exiting");
  return 0;
}

std::optional<json> McpServer::Handle(const json& message) {
  if (!message.is_object()) {
    return ErrorReply(nullptr, kJsonRpcInvalidRequest,
                      message.is_array()
                          ? "Invalid Request: batches (JSON arrays) are not "
                            "supported; send one message per line"
                          : "Invalid Request: a message must be a JSON object");
  }
  json id = nullptr;
  const auto id_it = message.find("id");
  const bool has_id = id_it != message.end();
  if (has_id) {
    if (!id_it->is_string() && !id_it->is_number()) {
      return ErrorReply(nullptr, kJsonRpcInvalidRequest,
                        "Invalid Request: \"id\" must be a string or a number");
    }
    id = *id_it;
  }
  const auto version = message.find("jsonrpc");
  if (version == message.end() || *version != "2.0") {
    return ErrorReply(id, kJsonRpcInvalidRequest,
                      "Invalid Request: \"jsonrpc\" must be \"2.0\"");
  }
  const auto method_it = message.find("method");
  if (method_it == message.end()) {
    if (message.contains("result") || message.contains("error")) {
      // A response; this server sends no requests, so there is nothing to
      // match it with.
      spdlog::debug("kbctl mcp: ignoring a response to no request");
      return std::nullopt;
    }
    return ErrorReply(id, kJsonRpcInvalidRequest,
                      "Invalid Request: \"method\" is missing");
  }
  if (!method_it->is_string()) {
    return ErrorReply(id, kJsonRpcInvalidRequest,
                      "Invalid Request: \"method\" must be a string");
  }
  const std::string method = method_it->get<std::string>();
  if (!has_id) {
    // A notification: never answered (notifications/initialized,
    // notifications/cancelled, ...).
    spdlog::debug("kbctl mcp: notification {}", method);
    return std::nullopt;
  }
  json params = json::object();
  if (const auto p = message.find("params"); p != message.end()) {
    if (!p->is_object() && !p->is_null()) {
      return ErrorReply(id, kJsonRpcInvalidParams,
                        absl::StrCat("Invalid params: \"params\" of ", method,
                                     " must be an object"));
    }
    if (p->is_object()) params = *p;
  }
  try {
    if (method == "initialize") return Reply(id, Initialize(params));
    if (method == "ping") return Reply(id, json::object());
    if (method == "tools/list") {
      absl::StatusOr<json> tools = RenderAgentTools("mcp");
      if (!tools.ok()) {
        return ErrorReply(id, kJsonRpcInternalError,
                          std::string(tools.status().message()));
      }
      return Reply(id, *std::move(tools));
    }
    if (method == "tools/call") return CallTool(id, params);
  } catch (const std::exception& e) {
    spdlog::error("kbctl mcp: {} failed: {}", method, e.what());
    return ErrorReply(
        id, kJsonRpcInternalError,
        absl::StrCat("Internal error in ", method, ": ", e.what()));
  }
  return ErrorReply(id, kJsonRpcMethodNotFound,
                    absl::StrCat("Method not found: '", method,
                                 "'; this server answers initialize, ping, "
                                 "tools/list and tools/call"));
}

json McpServer::Initialize(const json& params) {
  std::string version = kMcpProtocolLatest;
  if (const auto v = params.find("protocolVersion");
      v != params.end() && v->is_string() &&
      (*v == kMcpProtocolLatest || *v == kMcpProtocolPrevious)) {
    version = v->get<std::string>();
  }
  std::string client = "an unnamed client";
  if (const auto info = params.find("clientInfo");
      info != params.end() && info->is_object() && info->contains("name") &&
      (*info)["name"].is_string()) {
    client = (*info)["name"].get<std::string>();
  }
  spdlog::info("kbctl mcp: initialize from {}, protocol {}", client, version);
  return {{"protocolVersion", version},
          {"capabilities", {{"tools", {{"listChanged", false}}}}},
          {"serverInfo", {{"name", "kbench"}, {"version", KBENCH_VERSION}}},
          {"instructions", kInstructions}};
}

absl::Status McpServer::EnsureSession(const json& args) {
  if (!session_id_.empty() || client_ == nullptr) return absl::OkStatus();
  v1::CreateSessionRequest request;
  request.set_problem(options_.problem);
  if (const auto p = args.find("problem");
      request.problem().empty() && p != args.end() && p->is_string()) {
    request.set_problem(p->get<std::string>());
  }
  absl::StatusOr<v1::CreateSessionResponse> created =
      client_->CreateSession(request);
  if (!created.ok()) return created.status();
  session_id_ = created->session().id();
  spdlog::info(
      "kbctl mcp: created session {} (problem {}); see it with "
      "`kbctl session show {}`",
      session_id_,
      created->session().problem().empty() ? std::string("not set yet")
                                           : created->session().problem(),
      session_id_);
  return absl::OkStatus();
}

json McpServer::CallTool(const json& id, const json& params) {
  const auto name_it = params.find("name");
  if (name_it == params.end() || !name_it->is_string()) {
    return ErrorReply(id, kJsonRpcInvalidParams,
                      absl::StrCat("Invalid params: tools/call needs "
                                   "params.name, the tool's name; tools: ",
                                   ToolNames()));
  }
  const std::string name = name_it->get<std::string>();
  if (FindAgentTool(name) == nullptr) {
    return ErrorReply(id, kJsonRpcInvalidParams,
                      absl::StrCat("Invalid params: unknown tool '", name,
                                   "'; tools: ", ToolNames()));
  }
  json args = json::object();
  if (const auto a = params.find("arguments"); a != params.end()) {
    if (!a->is_object() && !a->is_null()) {
      return ErrorReply(id, kJsonRpcInvalidParams,
                        absl::StrCat("Invalid params: ", name,
                                     ": params.arguments must be an object"));
    }
    if (a->is_object()) args = *a;
  }
  const auto own = args.find("session_id");
  const bool names_session =
      own != args.end() && own->is_string() && !own->get<std::string>().empty();
  absl::StatusOr<AgentToolResult> result;
  if (absl::Status s = names_session ? absl::OkStatus() : EnsureSession(args);
      !s.ok()) {
    // The model can act on this (e.g. wait for kbd), so it is a tool result.
    AgentToolResult refused;
    refused.is_error = true;
    refused.text =
        absl::StrCat("ERROR ", StatusCodeName(static_cast<int>(s.code())),
                     ": cannot create a kbench session: ", s.message(), "\n");
    refused.structured = {
        {"error",
         {{"code", StatusCodeName(static_cast<int>(s.code()))},
          {"message", std::string(s.message())}}}};
    result = std::move(refused);
  } else {
    result = CallAgentTool(backend_, name, args, session_id_);
  }
  if (!result.ok()) {
    const absl::StatusCode code = result.status().code();
    const bool params_error = code == absl::StatusCode::kNotFound ||
                              code == absl::StatusCode::kInvalidArgument;
    return ErrorReply(
        id, params_error ? kJsonRpcInvalidParams : kJsonRpcInternalError,
        absl::StrCat(params_error ? "Invalid params: " : "Internal error: ",
                     result.status().message()));
  }
  spdlog::info("kbctl mcp: {} -> {}", name,
               result->is_error ? "isError" : "ok");
  return Reply(id, ToMcpToolResult(*std::move(result)));
}

}  // namespace kbench
