// Shared helpers of the HttpServer unit tests (http_server_test.cc,
// http_connection_server_test.cc): server options on loopback, and the
// checks every JSON reply gets (Content-Type, the error object's status and
// code).
#ifndef KBENCH_SERVER_HTTP_HTTP_FIXTURES_H_
#define KBENCH_SERVER_HTTP_HTTP_FIXTURES_H_

#include <gtest/gtest.h>
#include <httplib.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "server/http/http_server.h"

namespace kbench {
namespace http_fixtures {

// Options that listen on 127.0.0.1:`port` (0: any free port).
inline HttpServer::Options Loopback(int port = 0) {
  HttpServer::Options o;
  o.listen = absl::StrCat("127.0.0.1:", port);
  return o;
}

// The reply's JSON body, after checking that there is a reply and that it
// says it is JSON; null when there is none (or it does not parse).
inline nlohmann::json Parse(const httplib::Result& res) {
  EXPECT_TRUE(res);
  if (!res) return nlohmann::json();
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  return nlohmann::json::parse(res->body, nullptr, /*allow_exceptions=*/false);
}

// The reply's error code, after checking its HTTP status.
inline std::string ErrorCode(const httplib::Result& res, int status) {
  nlohmann::json body = Parse(res);
  if (!res) return "";
  EXPECT_EQ(res->status, status) << res->body;
  EXPECT_EQ(body["error"]["status"], status) << res->body;
  return body["error"]["code"].is_string()
             ? body["error"]["code"].get<std::string>()
             : "";
}

// The reply's error message ("" when it has none).
inline std::string ErrorMessage(const httplib::Result& res) {
  nlohmann::json body = Parse(res);
  const nlohmann::json& m = body["error"]["message"];
  return m.is_string() ? m.get<std::string>() : "";
}

}  // namespace http_fixtures
}  // namespace kbench

#endif  // KBENCH_SERVER_HTTP_HTTP_FIXTURES_H_
