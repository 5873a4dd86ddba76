// Checks for input that comes from clients (HTTP bodies and headers, MCP
// lines, gRPC fields): JSON size and nesting depth before any recursive
// walk, and the identifiers and file names that end up in the store, in log
// lines and in NVRTC. Every front end calls these at its boundary; the core
// calls the identifier checks again, so a path that forgets cannot poison
// the store.
//
// Thread safety: pure functions.
#ifndef KBENCH_BASE_UNTRUSTED_INPUT_H_
#define KBENCH_BASE_UNTRUSTED_INPUT_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace google::protobuf {
class Message;
}  // namespace google::protobuf

namespace kbench {

struct JsonLimits {
  // Largest text accepted, in bytes (a 256 KiB kernel source escaped as
  // JSON fits in 1 MiB).
  size_t max_bytes = size_t{1} << 20;
  // Deepest nesting of arrays and objects; nlohmann::json's dump and the
  // schema checks recurse once per level, so this bounds their stack.
  int max_depth = 32;
};

// InvalidArgument (naming the limit) when `text` is longer than
// limits.max_bytes or nests arrays/objects deeper than limits.max_depth.
// A linear scan that understands JSON strings; it does not validate JSON.
absl::Status CheckJsonLimits(absl::string_view text,
                             const JsonLimits& limits = {});

// CheckJsonLimits, then nlohmann's parser without exceptions.
// InvalidArgument with the parser's message (and its byte offset) when the
// text is not JSON. Empty or blank text is an error here; callers that
// accept an empty body decide that themselves.
absl::StatusOr<nlohmann::json> ParseUntrustedJson(
    absl::string_view text, const JsonLimits& limits = {});

// Where a valid id comes from, for the message that refuses one ("...; use
// a session id as CreateSession returned it"). Pass "" for ids a caller
// names itself by (a worker's own ids, kbworker's flags): no RPC gives them.
inline constexpr char kSessionIdSource[] =
    "a session id as CreateSession returned it";
inline constexpr char kJobIdSource[] = "a job id as SubmitJob returned it";
inline constexpr char kProblemNameSource[] =
    "a problem name as ListProblems returns it";

// Session ids: 1 to 128 bytes of [A-Za-z0-9._:-]. Empty is OK (no
// session). `what` names the field in the message ("session_id",
// "X-Kbench-Session"), `source` where a valid one comes from.
absl::Status ValidateSessionId(absl::string_view id,
                               absl::string_view what = "session_id",
                               absl::string_view source = kSessionIdSource);
// Job ids: the same alphabet and length; empty is an error.
absl::Status ValidateJobId(absl::string_view id,
                           absl::string_view what = "job_id",
                           absl::string_view source = kJobIdSource);
// Kernel file names as shown in diagnostics: 1 to 128 bytes of
// [A-Za-z0-9._+ -], not starting with '.', '-' or ' ' nor ending with ' '.
// Empty is OK (the default name is used). No directories or control
// characters: the name reaches NVRTC, log lines and the store.
absl::Status ValidateFileName(absl::string_view name,
                              absl::string_view what = "filename");
// Whether `text` is well-formed UTF-8: no overlong forms, surrogates or
// code points past U+10FFFF (what a proto3 string must hold).
bool IsValidUtf8(absl::string_view text);
// `text` with each byte of an ill-formed sequence replaced by U+FFFD (for
// text that must go into a proto3 string whatever it holds: messages that
// quote a client's bytes, rows salvaged from the store).
std::string ScrubUtf8(absl::string_view text);
// The longest prefix of `text` of at most `max_bytes` that does not end
// inside a UTF-8 sequence (for quoting the start of a long text).
absl::string_view Utf8Prefix(absl::string_view text, size_t max_bytes);
// The full name of the first string field of `message` (depth first,
// nested messages included) whose value is not UTF-8, or "" if none: such
// a message cannot be sent over gRPC or read back from the store.
std::string FindNonUtf8Field(const google::protobuf::Message& message);

// Valid UTF-8 (what proto3 string fields must hold, or the stored row
// cannot be read back), any length, control characters allowed.
absl::Status ValidateUtf8(absl::string_view text, absl::string_view what);
// A free-text field (stage details, problem names in requests): valid
// UTF-8, at most `max_bytes`, no control characters but tab.
absl::Status ValidateText(absl::string_view text, size_t max_bytes,
                          absl::string_view what);

}  // namespace kbench

#endif  // KBENCH_BASE_UNTRUSTED_INPUT_H_
