// JSON replies for kbd's HTTP routes (tools, dashboard API, metrics), so
// every route answers alike: application/json bodies, and errors as
// {"error":{"code":"NOT_FOUND"|"INVALID_ARGUMENT"|...,"status":N,
// "message":...}}. Also the mapping of an absl::Status onto HTTP.
//
// Thread safety: stateless.
#ifndef KBENCH_SERVER_HTTP_HTTP_JSON_H_
#define KBENCH_SERVER_HTTP_HTTP_JSON_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace httplib {
class Server;
struct Response;
}  // namespace httplib

namespace kbench {

// Serializes without throwing: invalid UTF-8 is replaced.
std::string DumpJson(const nlohmann::json& j);

void ReplyJson(httplib::Response& res, int status, const nlohmann::json& body);
void ReplyError(httplib::Response& res, int status, absl::string_view code,
                absl::string_view message);

// 405 METHOD_NOT_ALLOWED for `method` on `path`, with an Allow header of
// `allowed` (e.g. "GET") and a message pointing to `usage`.
void ReplyMethodNotAllowed(httplib::Response& res, absl::string_view method,
                           absl::string_view path, absl::string_view allowed,
                           absl::string_view usage);

// Answers every method but GET on `pattern` with ReplyMethodNotAllowed
// (Allow: GET). The request body is not read; when there is one the
// connection is closed after the reply.
void RouteNonGetTo405(httplib::Server& server, const std::string& pattern,
                      const std::string& usage);

// NotFound → 404, InvalidArgument/OutOfRange → 400, FailedPrecondition →
// 409, Unavailable → 503, DeadlineExceeded → 504, else 500.
int HttpStatusFor(const absl::Status& status);
// Replies with `status` as a JSON error (its code name and message).
void ReplyStatus(httplib::Response& res, const absl::Status& status);

}  // namespace kbench

#endif  // KBENCH_SERVER_HTTP_HTTP_JSON_H_
