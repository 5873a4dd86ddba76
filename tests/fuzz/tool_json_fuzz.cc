// Fuzz target: what kbd's HTTP tool handler (POST /v1/tools/{name}) does
// with a request: the body through ParseUntrustedJson (size and depth
// limits, then the parser), the session header through ValidateSessionId
// (a bad one ends the request), then CallAgentTool against a fake backend
// (tests/fuzz/fake_backend.h) and the reply rendered as the handler sends it.
//
// Input: the tool name on the first line, the X-Kbench-Session header on
// the second, the body after that (e.g. "compile_kernel\n\n{...}"). A
// blank body means {} as in the handler.
//
// Invariants beyond "no crash, leak or UB": CallAgentTool never throws (the
// handler would turn an exception into a 500; arguments that pass the
// schema check must map cleanly); its errors are NotFound (tool) or
// InvalidArgument (arguments); structuredContent is an object; a known
// tool with schema-valid arguments reaches the backend.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "absl/strings/ascii.h"
#include "agent/agent_tools.h"
#include "base/untrusted_input.h"
#include "tests/fuzz/fake_backend.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

kbench::fuzz::FakeToolBackend& Backend() {
  static auto* const kBackend =
      new kbench::fuzz::FakeToolBackend(kbench::fuzz::ShippedProblems()[0]);
  return *kBackend;
}

// The next line of `rest` (without its '\n'), consumed.
absl::string_view TakeLine(absl::string_view& rest) {
  const size_t nl = rest.find('\n');
  const absl::string_view line = rest.substr(0, nl);
  rest.remove_prefix(nl == absl::string_view::npos ? rest.size() : nl + 1);
  return line;
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
  absl::string_view rest = kbench::fuzz::AsText(data, size);
  const std::string name(TakeLine(rest));
  const std::string session(TakeLine(rest));

  // The handler answers 400 for a bad header before it reads the body.
  if (!kbench::ValidateSessionId(session, "X-Kbench-Session").ok()) return 0;
  absl::StatusOr<json> args = json::object();
  if (!absl::StripAsciiWhitespace(rest).empty()) {
    args = kbench::ParseUntrustedJson(rest);
  }
  if (!args.ok()) {
    if (args.status().code() != absl::StatusCode::kInvalidArgument) {
      Fail("ParseUntrustedJson failed with a code other than InvalidArgument",
           args.status().ToString());
    }
    return 0;
  }
  const int64_t calls_before = Backend().calls();
  absl::StatusOr<kbench::AgentToolResult> result;
  try {
    result = kbench::CallAgentTool(Backend(), name, *args, session);
  } catch (const std::exception& e) {
    Fail(std::string("CallAgentTool threw (a 500 from the handler): ") +
             e.what(),
         rest);
  }
  if (!result.ok()) {
    const absl::StatusCode code = result.status().code();
    if (code != absl::StatusCode::kNotFound &&
        code != absl::StatusCode::kInvalidArgument) {
      Fail(
          "CallAgentTool failed with a code other than NotFound or "
          "InvalidArgument",
          result.status().ToString());
    }
    if (code == absl::StatusCode::kNotFound &&
        kbench::FindAgentTool(name) != nullptr) {
      Fail("a known tool was reported unknown", name);
    }
    return 0;
  }
  if (Backend().calls() == calls_before) {
    Fail("a call that passed the schema check did not reach the backend", name);
  }
  const json reply = kbench::ToMcpToolResult(*std::move(result));
  if (!reply["structuredContent"].is_object()) {
    Fail("structuredContent is not an object");
  }
  // As the handler sends it: invalid UTF-8 replaced, never thrown.
  const std::string body =
      reply.dump(-1, ' ', false, json::error_handler_t::replace);
  if (json::parse(body, nullptr, false).is_discarded()) {
    Fail("the reply body is not JSON", body);
  }
  return 0;
}
