#include "server/http/http_server.h"

#include <errno.h>
#include <httplib.h>
#include <string.h>
#include <sys/socket.h>

#include <exception>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/untrusted_input.h"
#include "contract/names.h"
#include "nlohmann/json.hpp"
#include "server/http/http_call_limiter.h"
#include "server/http/http_connection_server.h"
#include "server/http/http_guard.h"
#include "server/http/http_json.h"
#include "server/http/http_task_queue.h"
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
    "/api/sources/{digest}, /api/sweeps/{id}";

// Seconds a refused (429) call should wait before it retries.
constexpr char kRetryAfterSeconds[] = "2";

// Parses the body of a tool call: empty (or blank) means no arguments.
// Size and depth are checked before the parser (and CheckArgs, which
// recurses) sees it.
absl::StatusOr<json> ParseArguments(const std::string& body, size_t max_bytes) {
  if (absl::StripAsciiWhitespace(body).empty()) return json::object();
  JsonLimits limits;
  limits.max_bytes = max_bytes;
  absl::StatusOr<json> args = ParseUntrustedJson(body, limits);
  if (args.ok()) return args;
  return absl::InvalidArgumentError(absl::StrCat(
      "the request body is rejected: ", args.status().message(),
      "; send the tool's arguments as one JSON object, e.g. "
      "{\"kernel_code\": \"...\"}, with strings escaped as JSON requires"));
}

// The backend one HTTP tool call sees: the real one, behind the call
// limits, with the client's hang-up as the cancellation.
class CallBackend : public AgentToolBackend {
 public:
  CallBackend(AgentToolBackend* inner, CancellableToolBackend* cancellable,
              HttpCallLimiter* limiter, std::function<bool()> client_gone)
      : inner_(inner),
        cancellable_(cancellable),
        limiter_(limiter),
        client_gone_(std::move(client_gone)) {}

  absl::StatusOr<v1::GetGpuSpecsResponse> GetGpuSpecs(
      const std::string& session_id) override {
    return inner_->GetGpuSpecs(session_id);
  }
  absl::StatusOr<v1::GetProblemResponse> GetProblem(
      const std::string& name, const std::string& session_id) override {
    return inner_->GetProblem(name, session_id);
  }
  absl::StatusOr<v1::ListProblemsResponse> ListProblems(
      const std::string& suite) override {
    return inner_->ListProblems(suite);
  }
  absl::StatusOr<v1::CompareRunsResponse> CompareRuns(
      const std::string& session_id, int turn_a, int turn_b) override {
    return inner_->CompareRuns(session_id, turn_a, turn_b);
  }
  absl::StatusOr<v1::Job> RunJob(v1::JobKind kind,
                                 const v1::KernelRequest& request) override {
    absl::StatusOr<HttpCallLimiter::Permit> permit =
        limiter_->Acquire(kind != v1::JOB_KIND_COMPILE, request.session_id());
    if (!permit.ok()) {
      refused_ = permit.status();
      return permit.status();
    }
    if (cancellable_ != nullptr) {
      return cancellable_->RunJobUntil(kind, request, client_gone_);
    }
    return inner_->RunJob(kind, request);
  }

  // The limit that refused the call, or OK.
  const absl::Status& refused() const { return refused_; }

 private:
  AgentToolBackend* inner_;
  CancellableToolBackend* cancellable_;
  HttpCallLimiter* limiter_;
  std::function<bool()> client_gone_;
  absl::Status refused_;
};

// A task queue that forwards to one shared with HttpServer (httplib owns
// and deletes what new_task_queue returns).
class SharedTaskQueue : public httplib::TaskQueue {
 public:
  explicit SharedTaskQueue(std::shared_ptr<HttpTaskQueue> queue)
      : queue_(std::move(queue)) {}
  void enqueue(std::function<void()> fn) override {
    queue_->enqueue(std::move(fn));
  }
  void shutdown() override { queue_->shutdown(); }

 private:
  std::shared_ptr<HttpTaskQueue> queue_;
};

std::string ToolNames() {
  std::vector<std::string> names;
  for (const AgentToolDef& d : AgentToolDefs()) names.push_back(d.name);
  return absl::StrJoin(names, ", ");
}

// A handler answering 405 for a route served only with `allowed`.
httplib::Server::Handler MethodNotAllowed(const std::string& allowed,
                                          const std::string& usage) {
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

HttpServer::HttpServer(const Options& options, CancellableToolBackend* backend)
    : options_(options), backend_(backend), cancellable_(backend) {}

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
  if (options_.max_gpu_calls < 1 || options_.max_compile_calls < 1 ||
      options_.max_calls_per_session < 1 ||
      options_.max_threads <
          options_.max_gpu_calls + options_.max_compile_calls + 16) {
    return absl::InvalidArgumentError(absl::StrCat(
        "HTTP limits: max_threads (", options_.max_threads,
        ") must be at least max_gpu_calls (", options_.max_gpu_calls,
        ") + max_compile_calls (", options_.max_compile_calls,
        ") + 16, so that cheap requests always find a thread, and every "
        "limit at least 1"));
  }
  // Validates the configured names before anything is bound.
  HttpGuard::Options guard_options{options_.allowed_hosts,
                                   options_.allowed_origins};
  if (absl::StatusOr<HttpGuard> g =
          HttpGuard::Create(guard_options, host, port == 0 ? 1 : port);
      !g.ok()) {
    return g.status();
  }

  HttpConnectionServer::Options conn;
  conn.keep_alive = options_.keep_alive;
  conn.io_timeout = options_.io_timeout;
  conn.request_timeout = options_.request_timeout;
  server_ = std::make_unique<HttpConnectionServer>(conn);
  httplib::Server& s = *server_;
  HttpTaskQueue::Options queue_options;
  queue_options.max_threads = options_.max_threads;
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    queue_ = std::make_shared<HttpTaskQueue>(queue_options);
  }
  s.new_task_queue = [queue = queue_] { return new SharedTaskQueue(queue); };
  HttpCallLimiter::Options limits;
  limits.max_gpu_calls = options_.max_gpu_calls;
  limits.max_compile_calls = options_.max_compile_calls;
  limits.max_calls_per_session = options_.max_calls_per_session;
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    limiter_ = std::make_shared<HttpCallLimiter>(limits);
  }
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
    {
      std::lock_guard<std::mutex> lock(queue_mu_);
      queue_.reset();
      limiter_.reset();
    }
    return absl::UnavailableError(absl::StrCat(
        "cannot listen for HTTP on ", listen, ": ",
        err != 0 ? strerror(err) : "not an address of this host",
        "; free the port, pick another (port 0 picks a free one) or turn "
        "HTTP off"));
  }
  if (!server_->SetListenBacklog(1024)) {
    spdlog::warn("HTTP: cannot raise the listen backlog: {}", strerror(errno));
  }
  // The guard knows the real port (port 0 resolved); it is set before the
  // first request can arrive.
  guard_ = std::make_unique<HttpGuard>(
      *HttpGuard::Create(guard_options, host, bound));
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
  guard_.reset();
  std::lock_guard<std::mutex> lock(queue_mu_);
  queue_.reset();
  limiter_.reset();
}

HttpServer::Stats HttpServer::stats() const {
  Stats out;
  std::shared_ptr<HttpTaskQueue> queue;
  std::shared_ptr<HttpCallLimiter> limiter;
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    queue = queue_;
    limiter = limiter_;
  }
  if (queue == nullptr || limiter == nullptr) return out;
  const HttpTaskQueue::Stats q = queue->stats();
  out.threads = q.threads;
  out.busy = q.busy;
  out.queued = q.queued;
  out.peak_threads = q.peak_threads;
  out.gpu_calls = limiter->gpu_calls();
  out.compile_calls = limiter->compile_calls();
  return out;
}

void HttpServer::Route() {
  httplib::Server& s = *server_;
  const std::string tool = R"(/v1/tools/([^/]+))";
  const size_t max_body = options_.max_body_bytes;
  AgentToolBackend* backend = backend_;
  CancellableToolBackend* cancellable = cancellable_;
  HttpCallLimiter* limiter = limiter_.get();

  // Host, Origin and Content-Type, before any route (or 404) answers.
  s.set_pre_routing_handler(
      [this](const httplib::Request& req, httplib::Response& res) {
        std::optional<HttpRejection> no = guard_->Check(req);
        if (!no) return httplib::Server::HandlerResponse::Unhandled;
        spdlog::debug("HTTP {} {} refused: {} {}", req.method, req.path,
                      no->status, no->code);
        // The body, if any, is unread: the connection closes after the reply
        // (HttpConnectionServer closes after every error reply).
        ReplyError(res, no->status, no->code, no->message);
        return httplib::Server::HandlerResponse::Handled;
      });

  s.Post(tool, [backend, cancellable, limiter, max_body](
                   const httplib::Request& req, httplib::Response& res,
                   const httplib::ContentReader& reader) {
    const std::string name = req.matches[1];
    // The session header, checked before it reaches the store or a log.
    if (req.get_header_value_count(kSessionHeader) > 1) {
      ReplyError(res, 400, "INVALID_ARGUMENT",
                 absl::StrCat("the request has more than one ", kSessionHeader,
                              " header; send one"));
      return;
    }
    const std::string header_session = req.get_header_value(kSessionHeader);
    if (absl::Status st = ValidateSessionId(header_session, kSessionHeader);
        !st.ok()) {
      ReplyStatus(res, st);
      return;
    }
    // Read the body here (not through cpp-httplib's form handling, which
    // caps form-encoded bodies at 8 KiB).
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
    absl::StatusOr<json> args = ParseArguments(body, max_body);
    if (!args.ok()) {
      ReplyError(res, 400, "INVALID_ARGUMENT", args.status().message());
      return;
    }
    if (args->is_object() && args->contains("session_id") &&
        (*args)["session_id"].is_string()) {
      if (absl::Status st = ValidateSessionId(
              (*args)["session_id"].get<std::string>(), "session_id");
          !st.ok()) {
        ReplyStatus(res, st);
        return;
      }
    }
    // The connection's socket, polled while the call waits for its job.
    const int fd = CurrentHttpConnectionFd();
    CallBackend call(backend, cancellable, limiter,
                     [fd] { return PeerHungUp(fd); });
    absl::StatusOr<AgentToolResult> result;
    try {
      result = CallAgentTool(call, name, *args, header_session);
    } catch (const std::exception& e) {
      spdlog::error("HTTP tool {}: {}", name, e.what());
      ReplyError(res, 500, "INTERNAL",
                 absl::StrCat("tool ", name, " failed: ", e.what()));
      return;
    }
    if (!call.refused().ok()) {
      res.set_header("Retry-After", kRetryAfterSeconds);
      ReplyError(res, 429, "RESOURCE_EXHAUSTED", call.refused().message());
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

  s.Get("/healthz", [health = options_.health](const httplib::Request&,
                                               httplib::Response& res) {
    if (health) {
      const absl::Status st = health();
      if (!st.ok()) {
        ReplyJson(
            res, 503,
            {{"status", "not_serving"}, {"reason", std::string(st.message())}});
        return;
      }
    }
    ReplyJson(res, 200, {{"status", "ok"}});
  });
  OnOtherMethods(s, "/healthz", "GET", MethodNotAllowed("GET", "GET /healthz"));

  // Routes of other front ends sharing this server (dashboard, metrics).
  for (const RouteInstaller& install : options_.routes) install(s);

  // Replies that no handler wrote a body for: unknown paths, bodies over
  // the limit, malformed HTTP.
  s.set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) {
          return httplib::Server::HandlerResponse::Unhandled;
        }
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
                             httplib::Response& res,
                             const std::exception_ptr& ep) {
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
