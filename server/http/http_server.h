// HttpServer: kbd's HTTP/JSON front end (cpp-httplib). It translates HTTP
// to the agent tools of agent/agent_tools.h and back, nothing more:
//
//   POST /v1/tools/{name}  body: the tool's JSON arguments (empty = {}),
//                          sent as Content-Type: application/json;
//                          header X-Kbench-Session: the session when the
//                          arguments carry none. 200 with the MCP-shaped
//                          result {"content":[{"type":"text","text":...}],
//                          "structuredContent":{...},"isError":bool} for
//                          every tool outcome; 400 malformed JSON (or nested
//                          past 32 levels), bad arguments or a bad session
//                          id, 404 unknown tool, 405 wrong method, 413 body
//                          over the limit, 415 not JSON, 429 too many calls
//                          in flight (Retry-After).
//   GET  /v1/tools         the tool list, as MCP's tools/list has it.
//   GET  /healthz          {"status":"ok"}, or 503 {"status":"not_serving",
//                          "reason":...} when Options::health says so.
//
// Every request first passes HttpGuard (server/http/http_guard.h): its Host
// must name this server (else 421), its Origin must be this server's (else
// 403), and a POST must be application/json (else 415); the routes of
// Options::routes (dashboard, /metrics) are guarded alike.
//
// Threads: see server/http/http_task_queue.h; connections (timeouts, hang-ups):
// server/http/http_connection_server.h. A tool call holds its thread while its
// job runs, so the calls in flight are bounded (HttpCallLimiter,
// server/http/http_call_limiter.h) below the thread limit; a client that hangs
// up while its call waits has its job cancelled (when the backend is a
// CancellableToolBackend).
//
// Every reply is application/json; errors are
// {"error":{"code":"NOT_FOUND"|"INVALID_ARGUMENT"|...,"status":N,
// "message":...}}.
//
// Ownership: borrows the backend, which must outlive the server.
// Thread safety: Start and Stop are called from one thread; requests are
// served on the server's own threads (the backend must be thread safe);
// stats() may be called from any thread.
#ifndef KBENCH_SERVER_HTTP_HTTP_SERVER_H_
#define KBENCH_SERVER_HTTP_HTTP_SERVER_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/agent_tools.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace kbench {

class HttpCallLimiter;
class HttpConnectionServer;
class HttpGuard;
class HttpTaskQueue;

// A backend whose job waits can end early, when the HTTP client that asked
// for the job has gone.
class CancellableToolBackend : public AgentToolBackend {
 public:
  // RunJob, but polls `cancelled` (a few times a second) while it waits;
  // once it answers true the job is cancelled and the call returns
  // Cancelled. An empty `cancelled` is RunJob.
  virtual absl::StatusOr<v1::Job> RunJobUntil(
      v1::JobKind kind, const v1::KernelRequest& request,
      const std::function<bool()>& cancelled) = 0;
};

class HttpServer {
 public:
  // Adds routes to the underlying httplib server (called once, before it
  // starts); lets other front ends (dashboard, /metrics) share the port.
  using RouteInstaller = std::function<void(httplib::Server&)>;

  struct Options {
    // "host:port" to listen on. Loopback by default: the API has no
    // authentication. Port 0 picks a free port (Start returns it).
    std::string listen = "127.0.0.1:8080";
    // Host names (NAME or NAME:PORT) accepted in the Host header besides
    // the listen address, localhost, 127.0.0.1 and [::1] (kbd:
    // --http-allowed-host, repeatable); see server/http/http_guard.h.
    std::vector<std::string> allowed_hosts;
    // Origins (SCHEME://HOST[:PORT]) accepted besides this server's own
    // (kbd: --http-allowed-origin, repeatable).
    std::vector<std::string> allowed_origins;
    // Most threads serving connections (server/http/http_task_queue.h). Must
    // leave at least 16 beyond max_gpu_calls + max_compile_calls.
    int max_threads = 512;
    // Tool calls that hold a thread until their job ends, in flight at
    // once: GPU tools, compiles, and either per session. Past them a call
    // gets 429 at once.
    int max_gpu_calls = 256;
    int max_compile_calls = 128;
    int max_calls_per_session = 16;
    // Longest wait for a connection's next request (the first included).
    absl::Duration keep_alive = absl::Seconds(2);
    // A request's head and body must arrive within this long of its first
    // byte; single reads and writes wait at most io_timeout.
    absl::Duration request_timeout = absl::Seconds(10);
    absl::Duration io_timeout = absl::Seconds(5);
    // Largest request body accepted; larger ones get 413. Kernel sources
    // are at most 256 KiB, so 1 MiB leaves room for JSON escaping.
    size_t max_body_bytes = 1 << 20;
    // Longest wait of one tool call for its job (the job is cancelled
    // after it). The server does not use it itself: its owner builds the
    // backend with it (kbd: LocalToolBackend).
    absl::Duration job_timeout = absl::Minutes(10);
    // More routes to serve on the same port.
    std::vector<RouteInstaller> routes;
    // Called by every GET /healthz (keep it fast: probes poll it); a
    // non-OK status answers 503 with its message as the reason. Empty:
    // always ok.
    std::function<absl::Status()> health;
  };

  struct Stats {
    int threads = 0;        // serving threads alive
    int busy = 0;           // of which serving a connection now
    int queued = 0;         // connections waiting for a thread
    int peak_threads = 0;   // most threads alive at once so far
    int gpu_calls = 0;      // GPU tool calls in flight
    int compile_calls = 0;  // compile calls in flight
  };

  // Without hang-up cancellation (the wait ends with the job or its
  // timeout).
  HttpServer(const Options& options, AgentToolBackend* backend);
  // A client that hangs up while its tool call waits cancels the job.
  HttpServer(const Options& options, CancellableToolBackend* backend);
  ~HttpServer();  // Stops the server.
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds the listening socket and starts serving on a thread of its own.
  // Returns the bound port. InvalidArgument for a malformed address, a
  // malformed allowed host or origin, or limits that leave cheap requests
  // no threads; Unavailable when the address cannot be bound (port in use, or
  // not an address of this host), FailedPrecondition when already started.
  absl::StatusOr<int> Start();
  // Stops accepting, waits for the requests in progress, joins the thread.
  // Safe to call more than once, and without Start.
  void Stop();

  // All zero before Start and after Stop.
  Stats stats() const;

 private:
  void Route();

  Options options_;
  AgentToolBackend* backend_;
  CancellableToolBackend* cancellable_ = nullptr;  // backend_ or null
  std::shared_ptr<HttpCallLimiter> limiter_;
  std::unique_ptr<HttpGuard> guard_;
  // Shared with the task queue httplib owns while it listens; the mutex
  // lets stats() read it while Stop drops it.
  mutable std::mutex queue_mu_;
  std::shared_ptr<HttpTaskQueue> queue_;
  std::unique_ptr<HttpConnectionServer> server_;
  std::thread thread_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_HTTP_HTTP_SERVER_H_
