// The agent-facing kbctl commands: `mcp` (the MCP server over stdio),
// `tools` (the tool definitions for a function-calling format), `diff` (two
// turns of a session compared) and `session create|show|list`. Like
// client/commands.h, every function writes its output to `out`, errors to
// `err`, and returns kbctl's exit code (0 ok, 2 usage error or failed call).
//
// Thread safety: each call makes its own client; calls are independent.
#ifndef KBENCH_CLIENT_SESSION_COMMANDS_H_
#define KBENCH_CLIENT_SESSION_COMMANDS_H_

#include <istream>
#include <ostream>
#include <string>

#include "client/commands.h"

namespace kbench {

// Flags of mcp.
struct McpOptions {
  // Session to record every tool call in; empty: create one on the first
  // tool call.
  std::string session;
  // Problem of the session created; empty: the first call's, else the
  // server's default.
  std::string problem;
  // spdlog level of the logs on stderr (trace ... off).
  std::string log_level = "info";
};

// mcp: serves MCP (JSON-RPC 2.0, one message per line) from `in` to `out`
// until `in` ends. Logs go to the process's stderr through spdlog (set up
// here when kbctl's logger is not); `out` carries the protocol alone.
// Returns 0 at the end of the input, 2 when `out` fails.
int RunMcp(const GlobalOptions& global, const McpOptions& options,
           std::istream& in, std::ostream& out);

// tools --format openai|anthropic|mcp: the tool definitions as JSON
// (2-space indent). An unknown format is a usage error (2).
int RunTools(const std::string& format, std::ostream& out, std::ostream& err);

// diff SESSION TURN_A TURN_B: the two turns compared (CompareRuns).
int RunDiff(const GlobalOptions& global, const std::string& session, int turn_a,
            int turn_b, std::ostream& out, std::ostream& err);

// session create [--problem P]: prints the new session's id.
int RunSessionCreate(const GlobalOptions& global, const std::string& problem,
                     std::ostream& out, std::ostream& err);

// session show ID: the session, then one line per turn: seq, tool, verdict,
// duration in ms, job id.
int RunSessionShow(const GlobalOptions& global, const std::string& id,
                   std::ostream& out, std::ostream& err);

// session list: one line per session, most recently updated first; `limit`
// 0 uses the server's default.
int RunSessionList(const GlobalOptions& global, int limit, std::ostream& out,
                   std::ostream& err);

}  // namespace kbench

#endif  // KBENCH_CLIENT_SESSION_COMMANDS_H_
