// Fuzz target: `kbctl mcp`'s line handler (McpServer::Serve), fed the input
// as its stdin: JSON-RPC 2.0 messages, one per line. Tool calls go to a fake
// backend (tests/fuzz/fake_backend.h); the client is null, so no session is
// created (calls run in the session their arguments name, if any).
//
// Invariants beyond "no crash, leak or UB": Serve returns 0 at the end of
// the input; a ping appended to the input is answered, last (the server
// keeps serving after any line); at most one reply per non-blank line; every
// reply is one line holding a JSON-RPC 2.0 object with an id (null allowed)
// and exactly one of result or error; no reply is -32603 (internal error),
// which the server only sends when a handler threw.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client/mcp_server.h"
#include "tests/fuzz/fake_backend.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

constexpr char kFinalPing[] =
    R"({"jsonrpc":"2.0","id":"fuzz-final","method":"ping"})";

kbench::fuzz::FakeToolBackend& Backend() {
  static auto* const kBackend =
      new kbench::fuzz::FakeToolBackend(kbench::fuzz::ShippedProblems()[0]);
  return *kBackend;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kbench::fuzz::QuietLogs();
  (void)Backend();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using kbench::fuzz::Fail;
  using nlohmann::json;
  // A ping after the fuzzed lines: whatever came before, the server must
  // still answer it, last.
  const std::string input =
      std::string(kbench::fuzz::AsText(data, size)) + "\n" + kFinalPing + "\n";
  size_t messages = 0;
  for (absl::string_view line : absl::StrSplit(input, '\n')) {
    absl::ConsumeSuffix(&line, "\r");  // What Serve skips, exactly.
    if (line.find_first_not_of(" \t") != absl::string_view::npos) ++messages;
  }

  kbench::McpServer server(Backend(), /*client=*/nullptr, {});
  std::istringstream in(input);
  std::ostringstream out;
  if (server.Serve(in, out) != 0) Fail("Serve did not return 0", input);

  const std::string output = out.str();
  if (output.empty()) Fail("no reply at all, not even to the final ping");
  if (output.back() != '\n') Fail("the last reply is not a whole line");
  size_t replies = 0;
  for (absl::string_view line : absl::StrSplit(
           absl::string_view(output).substr(0, output.size() - 1), '\n')) {
    ++replies;
    const json reply = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!reply.is_object()) Fail("a reply is not a JSON object", line);
    if (reply.value("jsonrpc", "") != "2.0") Fail("a reply is not 2.0", line);
    if (!reply.contains("id")) Fail("a reply has no id", line);
    if (reply.contains("result") == reply.contains("error")) {
      Fail("a reply needs exactly one of result and error", line);
    }
    if (reply.contains("error") &&
        reply["error"].value("code", 0) == kbench::kJsonRpcInternalError) {
      Fail("a handler threw (-32603 internal error)", line);
    }
  }
  if (replies > messages) Fail("more replies than messages", input);
  const size_t last = output.rfind('\n', output.size() - 2);
  const json final_reply = json::parse(
      output.substr(last == std::string::npos ? 0 : last + 1), nullptr, false);
  if (final_reply.value("id", json()) != "fuzz-final" ||
      !final_reply.contains("result")) {
    Fail("the server did not answer a ping after the input", input);
  }
  return 0;
}
