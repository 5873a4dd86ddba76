#include "server/http_json.h"

#include <httplib.h>

#include "common/report_text.h"

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
             StatusCodeName(static_cast<int>(status.code())),
             status.message());
}

}  // namespace kbench
