// HttpServer: kbd's HTTP/JSON front end (cpp-httplib). It translates HTTP
// to the agent tools of common/agent_tools.h and back, nothing more:
//
//   POST /v1/tools/{name}  body: the tool's JSON arguments (empty = {});
//                          header X-Kbench-Session: the session when the
//                          arguments carry none. 200 with the MCP-shaped
//                          result {"content":[{"type":"text","text":...}],
//                          "structuredContent":{...},"isError":bool} for
//                          every tool outcome; 400 malformed JSON or bad
//                          arguments, 404 unknown tool, 405 wrong method,
//                          413 body over the limit.
//   GET  /v1/tools         the tool list, as MCP's tools/list has it.
//   GET  /healthz          {"status":"ok"}.
//
// Every reply is application/json; errors are
// {"error":{"code":"NOT_FOUND"|"INVALID_ARGUMENT"|...,"status":N,
// "message":...}}.
//
// Ownership: borrows the backend, which must outlive the server.
// Thread safety: Start and Stop are called from one thread; requests are
// served on the server's own threads (the backend must be thread safe).
#ifndef KBENCH_SERVER_HTTP_SERVER_H_
#define KBENCH_SERVER_HTTP_SERVER_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/agent_tools.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace kbench {

class HttpServer {
 public:
  // Adds routes to the underlying httplib server (called once, before it
  // starts); lets other front ends (dashboard, /metrics) share the port.
  using RouteInstaller = std::function<void(httplib::Server&)>;

  struct Options {
    // "host:port" to listen on. Loopback by default: the API has no
    // authentication. Port 0 picks a free port (Start returns it).
    std::string listen = "127.0.0.1:8080";
    // Threads serving requests. A tool call holds its thread until its job
    // is done, so this bounds the tool calls served at once.
    int threads = 8;
    // Largest request body accepted; larger ones get 413. Kernel sources
    // are at most 256 KiB, so 1 MiB leaves room for JSON escaping.
    size_t max_body_bytes = 1 << 20;
    // Longest wait of one tool call for its job (the job is cancelled
    // after it). The server does not use it itself: its owner builds the
    // backend with it (kbd: LocalToolBackend).
    absl::Duration job_timeout = absl::Minutes(10);
    // More routes to serve on the same port.
    std::vector<RouteInstaller> routes;
  };

  HttpServer(const Options& options, AgentToolBackend* backend);
  ~HttpServer();  // Stops the server.
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds the listening socket and starts serving on a thread of its own.
  // Returns the bound port. InvalidArgument for a malformed address,
  // Unavailable when the address cannot be bound (port in use, or not an
  // address of this host), FailedPrecondition when already started.
  absl::StatusOr<int> Start();
  // Stops accepting, waits for the requests in progress, joins the thread.
  // Safe to call more than once, and without Start.
  void Stop();

 private:
  void Route();

  Options options_;
  AgentToolBackend* backend_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_HTTP_SERVER_H_
