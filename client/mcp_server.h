// McpServer: the agent tools as an MCP server (Model Context Protocol) over
// stdio, for `kbctl mcp`. JSON-RPC 2.0, one message per line on the input,
// one reply per line on the output; nothing else is ever written to the
// output (logs go to stderr through spdlog).
//
// Methods: initialize, ping, tools/list, tools/call; notifications (messages
// without an id, such as notifications/initialized) are never answered.
// Requests are handled one at a time, in order. A tool that reports a
// problem (a compile error, a wrong result, no GPU) answers a normal result
// with isError true; protocol mistakes are JSON-RPC errors:
//   -32700 parse error (id null), -32600 invalid request,
//   -32601 unknown method, -32602 invalid params (unknown tool, arguments
//   that break the tool's schema), -32603 internal error.
//
// The session: the one named by McpServerOptions::session_id, else one
// created (CreateSession) on the first tools/call whose arguments name none,
// then reused. Its id is logged to stderr.
//
// Ownership: borrows the backend and the client (both must outlive it).
// Thread safety: not thread safe; one thread serves one stream.
#ifndef KBENCH_CLIENT_MCP_SERVER_H_
#define KBENCH_CLIENT_MCP_SERVER_H_

#include <istream>
#include <optional>
#include <ostream>
#include <string>

#include "agent/agent_tools.h"
#include "client/kbench_client.h"
#include "nlohmann/json.hpp"

namespace kbench {

// JSON-RPC 2.0 error codes.
inline constexpr int kJsonRpcParseError = -32700;
inline constexpr int kJsonRpcInvalidRequest = -32600;
inline constexpr int kJsonRpcMethodNotFound = -32601;
inline constexpr int kJsonRpcInvalidParams = -32602;
inline constexpr int kJsonRpcInternalError = -32603;

// The MCP protocol versions answered as asked; any other gets the latest.
inline constexpr char kMcpProtocolLatest[] = "2025-11-25";
inline constexpr char kMcpProtocolPrevious[] = "2025-06-18";

struct McpServerOptions {
  // Session every tool call is recorded in; empty: create one on the first
  // tools/call (unless that call's arguments carry a session_id).
  std::string session_id;
  // Problem of the session created; empty: the first call's `problem`
  // argument, else the server's default.
  std::string problem;
};

class McpServer {
 public:
  // `client` creates the session; null never creates one (tool calls then
  // run without a session unless their arguments name one).
  McpServer(AgentToolBackend& backend, KbenchClient* client,
            McpServerOptions options);

  McpServer(const McpServer&) = delete;
  McpServer& operator=(const McpServer&) = delete;

  // Reads messages from `in`, one per line, until its end, and writes each
  // reply as one line to `out` (flushed). Blank lines are skipped. Returns
  // 0 at the end of the input, 2 when `out` fails.
  int Serve(std::istream& in, std::ostream& out);

  // Handles one parsed message: the reply to write, or nullopt for a
  // notification (or a response, which this server never asked for).
  std::optional<nlohmann::json> Handle(const nlohmann::json& message);

  // The reply to a line that is not JSON (a -32700 error, id null).
  static nlohmann::json ParseErrorReply(const std::string& detail);

  // The session in use; empty until one is named or created.
  const std::string& session_id() const { return session_id_; }

 private:
  nlohmann::json Initialize(const nlohmann::json& params);
  nlohmann::json CallTool(const nlohmann::json& id,
                          const nlohmann::json& params);
  // Creates the session when there is none and a client to create it with.
  absl::Status EnsureSession(const nlohmann::json& args);

  AgentToolBackend& backend_;
  KbenchClient* client_;
  McpServerOptions options_;
  std::string session_id_;
};

}  // namespace kbench

#endif  // KBENCH_CLIENT_MCP_SERVER_H_
