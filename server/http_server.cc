#include "server/http_server.h"

#include <errno.h>
#include <httplib.h>
#include <string.h>
#include <sys/socket.h>

#include <exception>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/report_text.h"
#include "nlohmann/json.hpp"
#include "server/http_json.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

using nlohmann::json;

constexpr char kSessionHeader[] = "X-Kbench-Session";
constexpr char kRoutes[] =
    "POST /v1/tools/{name} (the tool's JSON arguments), GET /v1/tools (the "
    "tool list), GET /healthz, GET /metrics (Prometheus), and the dashboard "
    "API: GET /api/problems, /api/workers, /api/jobs, /api/jobs/{id}, "
    "/api/sessions, /api/sessions/{id}, /api/sessions/{id}/compare?a=&b=, "
    "/api/sources/{digest}";

// Records the first parse error with its position (nlohmann's parser
// reports errors to a SAX handler without throwing).
class ParseErrorSax : public nlohmann::json_sax<json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    message = ex.what();
    return false;
  }
  std::string message;
};

// Parses the body of a tool call: empty (or blank) means no arguments.
absl::StatusOr<json> ParseArguments(const std::string& body) {
  if (absl::StripAsciiWhitespace(body).empty()) return json::object();
  json args = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!args.is_discarded()) return args;
  ParseErrorSax sax;
  json::sax_parse(body, &sax);
  return absl::InvalidArgumentError(absl::StrCat(
      "the request body is not valid JSON (", sax.message,
      "); send the tool's arguments as one JSON object, e.g. "
      "{\"kernel_code\": \"...\"}, with strings escaped as JSON requires"));
}

std::string ToolNames() {
  std::vector<std::string> names;
  for (const AgentToolDef& d : AgentToolDefs()) names.push_back(d.name);
  return absl::StrJoin(names, ", ");
}

// A handler answering 405 for a route served only with `allowed`.
httplib::Server::Handler MethodNotAllowed(std::string allowed,
                                          std::string usage) {
  return [allowed, usage](const httplib::Request& req, httplib::Response& res) {
    res.set_header("Allow", allowed);
    ReplyError(
        res, 405, "METHOD_NOT_ALLOWED",
        absl::StrCat(req.method, " ", req.path, " is not served; use ", usage));
  };
}

// Registers `handler` for every method but `except` on `pattern`.
void OnOtherMethods(httplib::Server& s, const std::string& pattern,
                    const std::string& except,
                    const httplib::Server::Handler& handler) {
  if (except != "GET") s.Get(pattern, handler);
  if (except != "POST") s.Post(pattern, handler);
  s.Put(pattern, handler);
  s.Patch(pattern, handler);
  s.Delete(pattern, handler);
  s.Options(pattern, handler);
}

}  // namespace

HttpServer::HttpServer(const Options& options, AgentToolBackend* backend)
    : options_(options), backend_(backend) {}

HttpServer::~HttpServer() { Stop(); }

absl::StatusOr<int> HttpServer::Start() {
  if (server_ != nullptr) {
    return absl::FailedPreconditionError("the HTTP server is already started");
  }
  const std::string& listen = options_.listen;
  const size_t colon = listen.rfind(':');
  int port = -1;
  std::string host = colon == std::string::npos ? "" : listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty() || !absl::SimpleAtoi(listen.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "HTTP listen address '", listen,
        "' is not HOST:PORT (e.g. 127.0.0.1:8080; port 0 picks a free one)"));
  }
  if (options_.threads < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "HTTP threads must be at least 1, not ", options_.threads));
  }

  server_ = std::make_unique<httplib::Server>();
  httplib::Server& s = *server_;
  const int threads = options_.threads;
  s.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  s.set_payload_max_length(options_.max_body_bytes);
  // SO_REUSEADDR only: cpp-httplib's default also sets SO_REUSEPORT, which
  // lets a second server bind a port in use instead of failing.
  s.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  Route();

  errno = 0;
  int bound = -1;
  if (port == 0) {
    bound = s.bind_to_any_port(host);
  } else if (s.bind_to_port(host, port)) {
    bound = port;
  }
  if (bound <= 0) {
    const int err = errno;
    server_.reset();
    return absl::UnavailableError(absl::StrCat(
        "cannot listen for HTTP on ", listen, ": ",
        err != 0 ? strerror(err) : "not an address of this host",
        "; free the port, pick another (port 0 picks a free one) or turn "
        "HTTP off"));
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // Wait until it accepts, so that a Stop right after Start cannot miss it.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!server_->is_running() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  return bound;
}

void HttpServer::Stop() {
  if (server_ == nullptr) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

void HttpServer::Route() {
  httplib::Server& s = *server_;
  const std::string tool = R"(/v1/tools/([^/]+))";
  const size_t max_body = options_.max_body_bytes;
  AgentToolBackend* backend = backend_;

  s.Post(tool, [backend, max_body](const httplib::Request& req,
                                   httplib::Response& res,
                                   const httplib::ContentReader& reader) {
    const std::string name = req.matches[1];
    // Read the body here (not through cpp-httplib's form handling, which
    // caps form-encoded bodies, what `curl -d` sends, at 8 KiB).
    std::string body;
    bool too_big = false;
    // A POST without either header has no body (curl -X POST without -d).
    const bool has_body =
        req.has_header("Content-Length") || req.has_header("Transfer-Encoding");
    const bool read = !has_body || reader([&](const char* data, size_t n) {
      if (body.size() + n > max_body) {
        too_big = true;
        return false;
      }
      body.append(data, n);
      return true;
    });
    if (too_big || res.status == 413) {
      // The rest of the body is unread: close rather than parse it next.
      res.set_header("Connection", "close");
      ReplyError(res, 413, "PAYLOAD_TOO_LARGE",
                 absl::StrCat("the request body is over ", max_body,
                              " bytes; kernel sources are at most 256 KiB"));
      return;
    }
    if (!read) {
      ReplyError(res, 400, "INVALID_ARGUMENT",
                 "the request body could not be read (cut short, or a bad "
                 "chunked encoding)");
      return;
    }
    absl::StatusOr<json> args = ParseArguments(body);
    if (!args.ok()) {
      ReplyError(res, 400, "INVALID_ARGUMENT", args.status().message());
      return;
    }
    absl::StatusOr<AgentToolResult> result;
    try {
      result = CallAgentTool(*backend, name, *args,
                             req.get_header_value(kSessionHeader));
    } catch (const std::exception& e) {
      spdlog::error("HTTP tool {}: {}", name, e.what());
      ReplyError(res, 500, "INTERNAL",
                 absl::StrCat("tool ", name, " failed: ", e.what()));
      return;
    }
    if (!result.ok()) {
      const absl::Status& st = result.status();
      std::string message(st.message());
      if (st.code() == absl::StatusCode::kNotFound) {
        absl::StrAppend(&message, "; the tools are: ", ToolNames(),
                        " (GET /v1/tools describes them)");
      }
      ReplyError(res, HttpStatusFor(st),
                 StatusCodeName(static_cast<int>(st.code())), message);
      return;
    }
    ReplyJson(res, 200, ToMcpToolResult(*std::move(result)));
  });
  OnOtherMethods(s, tool, "POST",
                 MethodNotAllowed("POST",
                                  "POST /v1/tools/{name} with the "
                                  "tool's JSON arguments as the body"));

  s.Get("/v1/tools", [](const httplib::Request&, httplib::Response& res) {
    absl::StatusOr<json> tools = RenderAgentTools("mcp");
    if (!tools.ok()) {
      ReplyError(res, 500, "INTERNAL", tools.status().message());
      return;
    }
    ReplyJson(res, 200, *tools);
  });
  OnOtherMethods(s, "/v1/tools", "GET",
                 MethodNotAllowed("GET",
                                  "GET /v1/tools to list the tools, "
                                  "POST /v1/tools/{name} to call one"));

  s.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    ReplyJson(res, 200, {{"status", "ok"}});
  });
  OnOtherMethods(s, "/healthz", "GET", MethodNotAllowed("GET", "GET /healthz"));

  // Routes of other front ends sharing this server (dashboard, metrics).
  for (const RouteInstaller& install : options_.routes) install(s);

  // Replies that no handler wrote a body for: unknown paths, bodies over
  // the limit, malformed HTTP.
  s.set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty())
          return httplib::Server::HandlerResponse::Unhandled;
        switch (res.status) {
          case 404:
            ReplyError(res, 404, "NOT_FOUND",
                       absl::StrCat("no route for ", req.method, " ", req.path,
                                    "; routes: ", kRoutes));
            break;
          case 413:
            res.set_header("Connection", "close");
            ReplyError(res, 413, "PAYLOAD_TOO_LARGE",
                       "the request is over the size limit; kernel sources are "
                       "at most 256 KiB");
            break;
          case 400:
            ReplyError(res, 400, "INVALID_ARGUMENT", "malformed HTTP request");
            break;
          default:
            ReplyError(res, res.status, absl::StrCat("HTTP_", res.status),
                       absl::StrCat("HTTP status ", res.status));
        }
        return httplib::Server::HandlerResponse::Handled;
      }));
  s.set_exception_handler([](const httplib::Request& req,
                             httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    spdlog::error("HTTP {} {}: {}", req.method, req.path, what);
    ReplyError(res, 500, "INTERNAL", what);
  });
  s.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    spdlog::debug("HTTP {} {} -> {}", req.method, req.path, res.status);
  });
}

}  // namespace kbench
