// HttpGuard: the checks every request to kbd's HTTP port passes before any
// route sees it, so that a web page the user happens to open cannot drive
// the port (the API has no authentication and is meant for the user's own
// agents, on loopback):
//
//   Host (DNS rebinding): a page on evil.example whose name is re-pointed at
//     127.0.0.1 sends "Host: evil.example:8080". Only these Hosts pass:
//     the listen address as bound (port 0 resolved to the real port),
//     localhost:PORT, 127.0.0.1:PORT, [::1]:PORT, the IP literal the
//     connection arrived on (an IP literal cannot be rebound), and the names
//     the operator configures (allowed_hosts). Anything else is 421
//     Misdirected Request; a missing Host on HTTP/1.1 (or several) is 400.
//   Origin (CSRF, and reads through CORS-less fetches): a request with an
//     Origin header must come from "http://" + an allowed Host, or from an
//     origin the operator configures (allowed_origins); otherwise 403, on
//     every route and method. Same-origin GETs of the dashboard send no
//     Origin; its same-origin POSTs send the page's own origin.
//   Sec-Fetch-Site: a request the browser marks "cross-site" or "same-site"
//     (e.g. an <img> or <script> of another page) that is not a top-level
//     navigation and carries no allowed Origin is 403 as well.
//   Content-Type: every POST must say application/json (parameters such as
//     "; charset=utf-8" allowed, case-insensitive); otherwise 415. This is
//     what stops the CSRF "simple request" (text/plain, form-encoded),
//     which a browser sends cross-origin without a preflight.
//
// A configured host is "name" (any port, or none: a reverse proxy usually
// forwards "Host: name") or "name:port" (exactly). A configured origin is
// "scheme://host[:port]" as a browser sends it (e.g. https://kb.example.com
// for a TLS proxy in front of kbd). A configured host name without a port
// also admits the origins http(s)://name and http(s)://name:PORT.
//
// Thread safety: immutable after Create; Check is safe from any thread.
#ifndef KBENCH_SERVER_HTTP_HTTP_GUARD_H_
#define KBENCH_SERVER_HTTP_HTTP_GUARD_H_

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace httplib {
struct Request;
}  // namespace httplib

namespace kbench {

// What the guard looks at in a request (the header values as received,
// each header's every occurrence).
struct HttpRequestFacts {
  std::string method;   // "GET", "POST", ...
  std::string version;  // "HTTP/1.1", "HTTP/1.0"
  std::vector<std::string> host;
  std::vector<std::string> origin;
  std::vector<std::string> content_type;
  std::string sec_fetch_site;  // "" when absent
  std::string sec_fetch_mode;
  // The address the connection arrived on ("127.0.0.1", "::1"), without
  // port; "" when unknown.
  std::string local_addr;

  static HttpRequestFacts From(const httplib::Request& req);
};

// Why a request was refused: the HTTP status, the JSON error code and a
// message saying what to do instead.
struct HttpRejection {
  int status = 0;
  std::string code;
  std::string message;
};

class HttpGuard {
 public:
  struct Options {
    // Host names (or name:port) besides the built-in loopback ones; kbd
    // flag --http-allowed-host, repeatable.
    std::vector<std::string> allowed_hosts;
    // Origins (scheme://host[:port]) allowed besides http://ALLOWED-HOST;
    // kbd flag --http-allowed-origin, repeatable.
    std::vector<std::string> allowed_origins;
  };

  // `listen_host` is the host part of the listen address ("127.0.0.1",
  // "localhost", "::1", "0.0.0.0"), `port` the bound port. InvalidArgument
  // naming the entry when a configured host or origin is malformed.
  static absl::StatusOr<HttpGuard> Create(const Options& options,
                                          absl::string_view listen_host,
                                          int port);

  // nullopt when the request may proceed.
  std::optional<HttpRejection> Check(const HttpRequestFacts& req) const;
  std::optional<HttpRejection> Check(const httplib::Request& req) const;

  int port() const { return port_; }

 private:
  HttpGuard() = default;

  bool HostAllowed(const std::string& host, const std::string& local) const;
  bool OriginAllowed(const std::string& origin, const std::string& local) const;
  std::string HowToConfigure() const;

  int port_ = 0;
  // Lower-case "host:port" strings (and "host" when the port is 80) that
  // name this server exactly.
  std::set<std::string> exact_hosts_;
  // Lower-case configured names without a port: any port.
  std::set<std::string> any_port_names_;
  // Lower-case configured origins, and http(s):// of configured names.
  std::set<std::string> origins_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_HTTP_HTTP_GUARD_H_
