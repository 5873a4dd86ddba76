#include "server/http/http_json.h"

#include <httplib.h>

#include "absl/strings/str_cat.h"
#include "contract/names.h"

namespace kbench {

using nlohmann::json;

std::string DumpJson(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

void ReplyJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(DumpJson(body), "application/json");
}

void ReplyError(httplib::Response& res, int status, absl::string_view code,
                absl::string_view message) {
  ReplyJson(res, status,
            {{"error",
              {{"code", std::string(code)},
               {"status", status},
               {"message", std::string(message)}}}});
}

void ReplyMethodNotAllowed(httplib::Response& res, absl::string_view method,
                           absl::string_view path, absl::string_view allowed,
                           absl::string_view usage) {
  res.set_header("Allow", std::string(allowed));
  ReplyError(res, 405, "METHOD_NOT_ALLOWED",
             absl::StrCat(method, " ", path, " is not served; use ", usage));
}

void RouteNonGetTo405(httplib::Server& server, const std::string& pattern,
                      const std::string& usage) {
  auto reply = [usage](const httplib::Request& req, httplib::Response& res) {
    const std::string length = req.get_header_value("Content-Length");
    if (req.has_header("Transfer-Encoding") ||
        (!length.empty() && length != "0")) {
      // The body is unread: close rather than parse it as the next request.
      res.set_header("Connection", "close");
    }
    ReplyMethodNotAllowed(res, req.method, req.path, "GET", usage);
  };
  // Content-reader handlers, so that cpp-httplib does not read (or insist
  // on a Content-Length for) the body first.
  auto with_body = [reply](const httplib::Request& req, httplib::Response& res,
                           const httplib::ContentReader&) { reply(req, res); };
  server.Post(pattern, with_body);
  server.Put(pattern, with_body);
  server.Patch(pattern, with_body);
  server.Delete(pattern, reply);
  server.Options(pattern, reply);
}

int HttpStatusFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kFailedPrecondition:
      return 409;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

void ReplyStatus(httplib::Response& res, const absl::Status& status) {
  ReplyError(res, HttpStatusFor(status),
             StatusCodeName(static_cast<int>(status.code())), status.message());
}

}  // namespace kbench
