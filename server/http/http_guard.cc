#include "server/http/http_guard.h"

#include <httplib.h>

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace kbench {
namespace {

constexpr char kCurlHint[] =
    "curl -H 'Content-Type: application/json' -d @args.json "
    "http://127.0.0.1:PORT/v1/tools/NAME";

// A header value as it may appear in a message: printable ASCII, at most
// 100 bytes, anything else as \xNN (it came from the client).
std::string Quote(absl::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < 100; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
    }
  }
  if (s.size() > 100) out += "...";
  return out;
}

struct HostPort {
  std::string name;  // lower case; IPv6 literals keep their brackets
  int port = 0;      // 0: none given
};

bool IsNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' ||
         c == '-' || c == '_';
}

// "name", "name:port", "[v6]" or "[v6]:port". nullopt when malformed.
std::optional<HostPort> ParseHostPort(absl::string_view text) {
  HostPort hp;
  absl::string_view name = text, port;
  if (absl::StartsWith(text, "[")) {
    const size_t close = text.find(']');
    if (close == absl::string_view::npos || close < 3) return std::nullopt;
    name = text.substr(0, close + 1);
    for (char c : name.substr(1, name.size() - 2)) {
      if (!absl::ascii_isxdigit(static_cast<unsigned char>(c)) && c != ':' &&
          c != '.') {
        return std::nullopt;
      }
    }
    absl::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return std::nullopt;
      port = rest.substr(1);
      if (port.empty()) return std::nullopt;
    }
  } else {
    const size_t colon = text.find(':');
    if (colon != absl::string_view::npos) {
      name = text.substr(0, colon);
      port = text.substr(colon + 1);
      if (port.empty()) return std::nullopt;
    }
    if (name.empty()) return std::nullopt;
    for (char c : name) {
      if (!IsNameChar(c)) return std::nullopt;
    }
  }
  if (!port.empty()) {
    for (char c : port) {
      if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
        return std::nullopt;
      }
    }
    if (port.size() > 5 || !absl::SimpleAtoi(port, &hp.port) || hp.port < 1 ||
        hp.port > 65535) {
      return std::nullopt;
    }
  }
  hp.name = absl::AsciiStrToLower(name);
  return hp;
}

std::string Join(const HostPort& hp, int default_port) {
  return absl::StrCat(hp.name, ":", hp.port != 0 ? hp.port : default_port);
}

struct Origin {
  std::string scheme;
  HostPort host;
};

// "scheme://host[:port]" (an optional trailing '/'). nullopt when malformed.
std::optional<Origin> ParseOrigin(absl::string_view text) {
  const size_t sep = text.find("://");
  if (sep == absl::string_view::npos || sep == 0) return std::nullopt;
  Origin o;
  o.scheme = absl::AsciiStrToLower(text.substr(0, sep));
  for (char c : o.scheme) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '+' &&
        c != '-' && c != '.') {
      return std::nullopt;
    }
  }
  absl::string_view rest = text.substr(sep + 3);
  absl::ConsumeSuffix(&rest, "/");
  std::optional<HostPort> hp = ParseHostPort(rest);
  if (!hp) return std::nullopt;
  o.host = *std::move(hp);
  return o;
}

int DefaultPort(const std::string& scheme) {
  return scheme == "https" ? 443 : 80;
}

std::string OriginKey(const Origin& o) {
  return absl::StrCat(o.scheme, "://", Join(o.host, DefaultPort(o.scheme)));
}

// The bracketed literal of the address a connection arrived on ("::1" →
// "[::1]"), and the IPv4 form of a v4-mapped one.
std::vector<std::string> LocalLiterals(absl::string_view addr) {
  std::vector<std::string> out;
  if (addr.empty()) return out;
  if (addr.find(':') == absl::string_view::npos) {
    out.emplace_back(addr);
    return out;
  }
  out.push_back(absl::StrCat("[", absl::AsciiStrToLower(addr), "]"));
  absl::string_view v4 = addr;
  if (absl::ConsumePrefix(&v4, "::ffff:") &&
      v4.find('.') != absl::string_view::npos) {
    out.emplace_back(v4);
  }
  return out;
}

HttpRejection Reject(int status, std::string code, std::string message) {
  return {status, std::move(code), std::move(message)};
}

std::vector<std::string> Values(const httplib::Request& req, const char* key) {
  std::vector<std::string> out;
  const size_t n = req.get_header_value_count(key);
  for (size_t i = 0; i < n; ++i) out.push_back(req.get_header_value(key, i));
  return out;
}

}  // namespace

HttpRequestFacts HttpRequestFacts::From(const httplib::Request& req) {
  HttpRequestFacts f;
  f.method = req.method;
  f.version = req.version;
  f.host = Values(req, "Host");
  f.origin = Values(req, "Origin");
  f.content_type = Values(req, "Content-Type");
  f.sec_fetch_site = req.get_header_value("Sec-Fetch-Site");
  f.sec_fetch_mode = req.get_header_value("Sec-Fetch-Mode");
  f.local_addr = req.local_addr;
  return f;
}

absl::StatusOr<HttpGuard> HttpGuard::Create(const Options& options,
                                            absl::string_view listen_host,
                                            int port) {
  if (port < 1 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("HTTP guard: port ", port, " is not a bound port"));
  }
  HttpGuard g;
  g.port_ = port;
  std::vector<std::string> names = {"localhost", "127.0.0.1", "[::1]"};
  std::string listen(absl::AsciiStrToLower(listen_host));
  if (listen.find(':') != std::string::npos && listen.front() != '[') {
    listen = absl::StrCat("[", listen, "]");
  }
  // A wildcard bind names no host; requests then need a loopback name, the
  // IP literal they arrived on, or a configured name.
  if (!listen.empty() && listen != "0.0.0.0" && listen != "[::]") {
    names.push_back(listen);
  }
  for (const std::string& entry : options.allowed_hosts) {
    std::optional<HostPort> hp =
        ParseHostPort(absl::StripAsciiWhitespace(entry));
    if (!hp) {
      return absl::InvalidArgumentError(
          absl::StrCat("--http-allowed-host '", Quote(entry),
                       "' is not a host name, NAME:PORT or [IPv6]:PORT (e.g. "
                       "kbench.example.com or kbench.lan:8080)"));
    }
    if (hp->port != 0) {
      g.exact_hosts_.insert(Join(*hp, 0));
      if (hp->port == 80) g.exact_hosts_.insert(hp->name);
      g.origins_.insert(absl::StrCat("http://", Join(*hp, 0)));
      g.origins_.insert(absl::StrCat("https://", Join(*hp, 0)));
      continue;
    }
    g.any_port_names_.insert(hp->name);
    for (const char* scheme : {"http", "https"}) {
      g.origins_.insert(
          absl::StrCat(scheme, "://", hp->name, ":", DefaultPort(scheme)));
      g.origins_.insert(absl::StrCat(scheme, "://", hp->name, ":", port));
    }
  }
  for (const std::string& name : names) {
    g.exact_hosts_.insert(absl::StrCat(name, ":", port));
    if (port == 80) g.exact_hosts_.insert(name);
  }
  for (const std::string& entry : options.allowed_origins) {
    std::optional<Origin> o = ParseOrigin(absl::StripAsciiWhitespace(entry));
    if (!o) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--http-allowed-origin '", Quote(entry),
          "' is not an origin SCHEME://HOST[:PORT] as a browser sends it "
          "(e.g. https://kbench.example.com)"));
    }
    g.origins_.insert(OriginKey(*o));
  }
  return g;
}

bool HttpGuard::HostAllowed(const std::string& host,
                            const std::string& local) const {
  std::optional<HostPort> hp = ParseHostPort(host);
  if (!hp) return false;
  if (any_port_names_.count(hp->name) > 0) return true;
  const std::string key = Join(*hp, 80);
  if (exact_hosts_.count(key) > 0) return true;
  for (const std::string& literal : LocalLiterals(local)) {
    if (key == absl::StrCat(literal, ":", port_)) return true;
  }
  return false;
}

bool HttpGuard::OriginAllowed(const std::string& origin,
                              const std::string& local) const {
  std::optional<Origin> o = ParseOrigin(origin);
  if (!o) return false;
  if (origins_.count(OriginKey(*o)) > 0) return true;
  // Same origin: http:// and a Host this server answers to by its exact
  // name and port (a configured any-port name is in origins_ already).
  if (o->scheme != "http") return false;
  const std::string key = Join(o->host, 80);
  if (exact_hosts_.count(key) > 0) return true;
  for (const std::string& literal : LocalLiterals(local)) {
    if (key == absl::StrCat(literal, ":", port_)) return true;
  }
  return false;
}

std::string HttpGuard::HowToConfigure() const {
  std::vector<std::string> hosts = {absl::StrCat("localhost:", port_),
                                    absl::StrCat("127.0.0.1:", port_),
                                    absl::StrCat("[::1]:", port_)};
  for (const std::string& h : exact_hosts_) {
    if (absl::EndsWith(h, absl::StrCat(":", port_)) &&
        std::find(hosts.begin(), hosts.end(), h) == hosts.end()) {
      hosts.push_back(h);
    }
  }
  for (const std::string& n : any_port_names_) hosts.push_back(n);
  return absl::StrCat(
      "kbd answers only requests whose Host is ", absl::StrJoin(hosts, ", "),
      " (or the IP address the connection arrived on), so that a web page "
      "cannot reach it through a re-pointed DNS name; to serve it under "
      "another name (a reverse proxy, a LAN name), start kbd with "
      "--http-allowed-host NAME (repeatable)");
}

std::optional<HttpRejection> HttpGuard::Check(
    const HttpRequestFacts& req) const {
  // Host.
  if (req.host.size() > 1) {
    return Reject(400, "INVALID_ARGUMENT",
                  "the request has more than one Host header; send one");
  }
  if (req.host.empty()) {
    if (req.version != "HTTP/1.0") {
      return Reject(400, "INVALID_ARGUMENT",
                    absl::StrCat("an HTTP/1.1 request needs a Host header "
                                 "(e.g. Host: 127.0.0.1:",
                                 port_, ")"));
    }
  } else {
    const std::string host(absl::StripAsciiWhitespace(req.host[0]));
    if (!HostAllowed(host, req.local_addr)) {
      return Reject(
          421, "MISDIRECTED_REQUEST",
          absl::StrCat("Host '", Quote(host), "' does not name this server. ",
                       HowToConfigure()));
    }
  }

  // Origin.
  const std::string how_else = absl::StrCat(
      "; kbd refuses requests from other web pages. Call it from a client "
      "that sends no Origin (curl, an agent, kbctl), from its own dashboard "
      "(http://127.0.0.1:",
      port_,
      "/), or, if that page is yours, start kbd with --http-allowed-origin "
      "ORIGIN (repeatable)");
  bool origin_allowed = false;
  if (req.origin.size() > 1) {
    return Reject(
        403, "PERMISSION_DENIED",
        absl::StrCat("the request has more than one Origin header", how_else));
  }
  if (req.origin.size() == 1) {
    const std::string origin(absl::StripAsciiWhitespace(req.origin[0]));
    if (!OriginAllowed(origin, req.local_addr)) {
      return Reject(403, "PERMISSION_DENIED",
                    absl::StrCat("Origin '", Quote(origin),
                                 "' is not this server's", how_else));
    }
    origin_allowed = true;
  }
  const std::string site = absl::AsciiStrToLower(req.sec_fetch_site);
  if (!origin_allowed && (site == "cross-site" || site == "same-site") &&
      absl::AsciiStrToLower(req.sec_fetch_mode) != "navigate") {
    return Reject(
        403, "PERMISSION_DENIED",
        absl::StrCat("the browser marks this request Sec-Fetch-Site: ", site,
                     " (made by another page)", how_else));
  }

  // Content-Type.
  if (req.method == "POST") {
    std::string got;
    bool json = false;
    if (req.content_type.size() == 1) {
      got = req.content_type[0];
      absl::string_view type = got;
      const size_t semi = type.find(';');
      if (semi != absl::string_view::npos) type = type.substr(0, semi);
      json = absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(type),
                                    "application/json");
    }
    if (!json) {
      return Reject(
          415, "UNSUPPORTED_MEDIA_TYPE",
          absl::StrCat(
              "a POST must be sent with 'Content-Type: application/json' ",
              req.content_type.empty() ? std::string("(it had none)")
              : req.content_type.size() > 1
                  ? std::string("(it had several)")
                  : absl::StrCat("(it had '", Quote(got), "')"),
              " and the tool's arguments as a JSON object, e.g. ", kCurlHint));
    }
  }
  return std::nullopt;
}

std::optional<HttpRejection> HttpGuard::Check(
    const httplib::Request& req) const {
  return Check(HttpRequestFacts::From(req));
}

}  // namespace kbench
