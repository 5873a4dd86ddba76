// HttpGuard as an attacker meets it: Hosts a rebound DNS name sends, Origins
// of other pages, the CSRF simple-request content types, malformed and
// duplicated headers, and what the operator can configure.
#include "server/http/http_guard.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"

namespace kbench {
namespace {

HttpGuard Guard(const HttpGuard::Options& options = {},
                const std::string& listen = "127.0.0.1", int port = 8080) {
  absl::StatusOr<HttpGuard> g = HttpGuard::Create(options, listen, port);
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

HttpRequestFacts Get(const std::string& host) {
  HttpRequestFacts f;
  f.method = "GET";
  f.version = "HTTP/1.1";
  f.host = {host};
  f.local_addr = "127.0.0.1";
  return f;
}

HttpRequestFacts Post(const std::string& host, const std::string& type) {
  HttpRequestFacts f = Get(host);
  f.method = "POST";
  f.content_type = {type};
  return f;
}

int StatusOf(const HttpGuard& g, const HttpRequestFacts& f) {
  std::optional<HttpRejection> r = g.Check(f);
  return r ? r->status : 0;
}

TEST(HttpGuardTest, LoopbackHostsWithTheBoundPortPass) {
  const HttpGuard g = Guard();
  for (const char* host : {"127.0.0.1:8080", "localhost:8080", "LocalHost:8080",
                           "[::1]:8080", " 127.0.0.1:8080 "}) {
    EXPECT_EQ(StatusOf(g, Get(host)), 0) << host;
  }
}

TEST(HttpGuardTest, ForeignOrMalformedHostsAre421) {
  const HttpGuard g = Guard();
  for (const char* host : {"evil.example:8080",
                           "evil.example",
                           "localhost:8081",
                           "localhost",
                           "127.0.0.1",
                           "localhost.:8080",
                           "127.0.0.2:8080",
                           "0.0.0.0:8080",
                           "user@localhost:8080",
                           "localhost:8080/x",
                           "localhost:8080:8080",
                           "[::1]",
                           "[::2]:8080",
                           "[zz]:8080",
                           "localhost:",
                           ":8080",
                           "",
                           "localhost:99999",
                           "localhost:-8080",
                           "127.0.0.1:8080 evil",
                           "127.0.0.1.nip.io:8080",
                           "localhost\xff:8080"}) {
    std::optional<HttpRejection> r = g.Check(Get(host));
    ASSERT_TRUE(r.has_value()) << host;
    EXPECT_EQ(r->status, 421) << host;
    EXPECT_EQ(r->code, "MISDIRECTED_REQUEST");
    EXPECT_TRUE(absl::StrContains(r->message, "--http-allowed-host"))
        << r->message;
    EXPECT_TRUE(absl::StrContains(r->message, "localhost:8080")) << r->message;
    // The client's bytes are quoted, never echoed raw.
    for (char c : r->message) {
      EXPECT_TRUE(c >= 0x20 && c < 0x7f) << host;
    }
  }
}

TEST(HttpGuardTest, MissingOrDuplicatedHostIs400OnHttp11) {
  const HttpGuard g = Guard();
  HttpRequestFacts f = Get("127.0.0.1:8080");
  f.host.clear();
  EXPECT_EQ(StatusOf(g, f), 400);
  f.version = "HTTP/1.0";  // HTTP/1.0 may omit it.
  EXPECT_EQ(StatusOf(g, f), 0);
  f = Get("127.0.0.1:8080");
  f.host.push_back("evil.example");
  EXPECT_EQ(StatusOf(g, f), 400);
  f.host = {"127.0.0.1:8080", "127.0.0.1:8080"};
  EXPECT_EQ(StatusOf(g, f), 400);
}

TEST(HttpGuardTest, TheListenHostAndTheArrivalAddressPass) {
  const HttpGuard named = Guard({}, "kbhost.lan", 9000);
  EXPECT_EQ(StatusOf(named, Get("kbhost.lan:9000")), 0);
  EXPECT_EQ(StatusOf(named, Get("kbhost.lan:9001")), 421);
  EXPECT_EQ(StatusOf(named, Get("localhost:9000")), 0);

  // A wildcard bind: the IP literal a connection arrived on is accepted
  // (it cannot be a rebound name), other literals are not.
  const HttpGuard any = Guard({}, "0.0.0.0", 8080);
  HttpRequestFacts f = Get("10.1.2.3:8080");
  f.local_addr = "10.1.2.3";
  EXPECT_EQ(StatusOf(any, f), 0);
  f.host = {"10.1.2.4:8080"};
  EXPECT_EQ(StatusOf(any, f), 421);
  f.host = {"0.0.0.0:8080"};
  EXPECT_EQ(StatusOf(any, f), 421);
  f.local_addr = "fe80::1";
  f.host = {"[FE80::1]:8080"};
  EXPECT_EQ(StatusOf(any, f), 0);
  f.local_addr = "::ffff:10.1.2.3";
  f.host = {"10.1.2.3:8080"};
  EXPECT_EQ(StatusOf(any, f), 0);

  const HttpGuard v6 = Guard({}, "::1", 8080);
  EXPECT_EQ(StatusOf(v6, Get("[::1]:8080")), 0);

  // On port 80 a Host without a port names it.
  const HttpGuard port80 = Guard({}, "127.0.0.1", 80);
  EXPECT_EQ(StatusOf(port80, Get("localhost")), 0);
  EXPECT_EQ(StatusOf(port80, Get("localhost:80")), 0);
  EXPECT_EQ(StatusOf(port80, Get("localhost:8080")), 421);
}

TEST(HttpGuardTest, ConfiguredHostsPass) {
  HttpGuard::Options o;
  o.allowed_hosts = {"KB.example.com", "lan-box:9000", "[fd00::5]"};
  const HttpGuard g = Guard(o);
  EXPECT_EQ(StatusOf(g, Get("kb.example.com")), 0);
  EXPECT_EQ(StatusOf(g, Get("kb.example.com:443")), 0);
  EXPECT_EQ(StatusOf(g, Get("KB.EXAMPLE.COM:8080")), 0);
  EXPECT_EQ(StatusOf(g, Get("x.kb.example.com")), 421);
  EXPECT_EQ(StatusOf(g, Get("kb.example.com.evil")), 421);
  EXPECT_EQ(StatusOf(g, Get("lan-box:9000")), 0);
  EXPECT_EQ(StatusOf(g, Get("lan-box:8080")), 421);
  EXPECT_EQ(StatusOf(g, Get("lan-box")), 421);
  EXPECT_EQ(StatusOf(g, Get("[fd00::5]:8080")), 0);
}

TEST(HttpGuardTest, MalformedConfigurationIsInvalidArgument) {
  for (const char* host : {"a b", "http://kb.example.com", "kb:0", "kb:x", "",
                           "[::1", "kb/path"}) {
    HttpGuard::Options o;
    o.allowed_hosts = {host};
    absl::StatusOr<HttpGuard> g = HttpGuard::Create(o, "127.0.0.1", 8080);
    ASSERT_FALSE(g.ok()) << host;
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(g.status().message(), "--http-allowed-host"))
        << g.status();
  }
  for (const char* origin :
       {"kb.example.com", "https://", "https://kb.example.com/path", "null",
        "://kb", "ht tp://kb"}) {
    HttpGuard::Options o;
    o.allowed_origins = {origin};
    absl::StatusOr<HttpGuard> g = HttpGuard::Create(o, "127.0.0.1", 8080);
    ASSERT_FALSE(g.ok()) << origin;
    EXPECT_TRUE(
        absl::StrContains(g.status().message(), "--http-allowed-origin"))
        << g.status();
  }
  EXPECT_FALSE(HttpGuard::Create({}, "127.0.0.1", 0).ok());
}

TEST(HttpGuardTest, SameOriginPassesAndForeignOriginsAre403) {
  const HttpGuard g = Guard();
  for (const char* origin : {"http://127.0.0.1:8080", "http://localhost:8080",
                             "HTTP://LOCALHOST:8080", "http://[::1]:8080",
                             "http://127.0.0.1:8080/"}) {
    HttpRequestFacts f = Get("127.0.0.1:8080");
    f.origin = {origin};
    EXPECT_EQ(StatusOf(g, f), 0) << origin;
  }
  for (const char* origin :
       {"http://evil.example", "http://evil.example:8080", "null",
        "https://127.0.0.1:8080", "http://127.0.0.1:8081", "http://127.0.0.1",
        "http://localhost:8080.evil.example", "file://", "",
        "http://127.0.0.1:8080/path", "chrome-extension://abcdef"}) {
    HttpRequestFacts f = Post("127.0.0.1:8080", "application/json");
    f.origin = {origin};
    std::optional<HttpRejection> r = g.Check(f);
    ASSERT_TRUE(r.has_value()) << origin;
    EXPECT_EQ(r->status, 403) << origin;
    EXPECT_EQ(r->code, "PERMISSION_DENIED");
    EXPECT_TRUE(absl::StrContains(r->message, "--http-allowed-origin"))
        << r->message;
    // Also on GET: the dashboard API serves kernel sources.
    f.method = "GET";
    f.content_type.clear();
    EXPECT_EQ(StatusOf(g, f), 403) << origin;
  }
  HttpRequestFacts two = Get("127.0.0.1:8080");
  two.origin = {"http://127.0.0.1:8080", "http://evil.example"};
  EXPECT_EQ(StatusOf(g, two), 403);
}

TEST(HttpGuardTest, ConfiguredOriginsPass) {
  HttpGuard::Options o;
  o.allowed_hosts = {"kb.example.com"};
  o.allowed_origins = {"https://Dash.Example.com", "http://tool.lan:3000"};
  const HttpGuard g = Guard(o);
  for (const char* origin :
       {"https://dash.example.com", "https://dash.example.com:443",
        "http://tool.lan:3000", "https://kb.example.com",
        "http://kb.example.com", "http://kb.example.com:8080"}) {
    HttpRequestFacts f = Get("kb.example.com");
    f.origin = {origin};
    EXPECT_EQ(StatusOf(g, f), 0) << origin;
  }
  for (const char* origin :
       {"http://dash.example.com", "http://tool.lan:3001",
        "https://kb.example.com:9999", "https://evil.kb.example.com"}) {
    HttpRequestFacts f = Get("kb.example.com");
    f.origin = {origin};
    EXPECT_EQ(StatusOf(g, f), 403) << origin;
  }
}

TEST(HttpGuardTest, CrossSiteFetchesWithoutOriginAre403) {
  const HttpGuard g = Guard();
  // <img src> / <script src> of another page: no Origin, but marked.
  HttpRequestFacts f = Get("127.0.0.1:8080");
  f.sec_fetch_site = "cross-site";
  f.sec_fetch_mode = "no-cors";
  EXPECT_EQ(StatusOf(g, f), 403);
  f.sec_fetch_site = "same-site";  // another port of localhost
  EXPECT_EQ(StatusOf(g, f), 403);
  // A link followed to the dashboard is a navigation: allowed.
  f.sec_fetch_mode = "navigate";
  EXPECT_EQ(StatusOf(g, f), 0);
  // The dashboard's own fetches.
  f.sec_fetch_site = "same-origin";
  f.sec_fetch_mode = "cors";
  EXPECT_EQ(StatusOf(g, f), 0);
  f.sec_fetch_site = "none";  // typed in the address bar
  f.sec_fetch_mode = "navigate";
  EXPECT_EQ(StatusOf(g, f), 0);
}

TEST(HttpGuardTest, PostsMustBeJson) {
  const HttpGuard g = Guard();
  for (const char* type : {"application/json", "Application/JSON",
                           "application/json; charset=utf-8",
                           " application/json ;charset=UTF-8"}) {
    EXPECT_EQ(StatusOf(g, Post("127.0.0.1:8080", type)), 0) << type;
  }
  // The CSRF simple requests, and near misses.
  for (const char* type :
       {"text/plain", "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x", "application/json-seq",
        "application/jsonp", "text/json", "", "application/ json",
        "text/plain; application/json"}) {
    std::optional<HttpRejection> r = g.Check(Post("127.0.0.1:8080", type));
    ASSERT_TRUE(r.has_value()) << type;
    EXPECT_EQ(r->status, 415) << type;
    EXPECT_EQ(r->code, "UNSUPPORTED_MEDIA_TYPE");
    EXPECT_TRUE(
        absl::StrContains(r->message, "-H 'Content-Type: application/json'"))
        << r->message;
  }
  HttpRequestFacts none = Post("127.0.0.1:8080", "x");
  none.content_type.clear();
  EXPECT_EQ(StatusOf(g, none), 415);
  HttpRequestFacts two = Post("127.0.0.1:8080", "application/json");
  two.content_type.push_back("text/plain");
  EXPECT_EQ(StatusOf(g, two), 415);
  // GETs need none.
  EXPECT_EQ(StatusOf(g, Get("127.0.0.1:8080")), 0);
}

TEST(HttpGuardTest, HostIsCheckedBeforeOriginAndContentType) {
  const HttpGuard g = Guard();
  HttpRequestFacts f = Post("evil.example:8080", "text/plain");
  f.origin = {"http://evil.example:8080"};
  EXPECT_EQ(StatusOf(g, f), 421);
  f.host = {"127.0.0.1:8080"};
  EXPECT_EQ(StatusOf(g, f), 403);
  f.origin.clear();
  EXPECT_EQ(StatusOf(g, f), 415);
}

}  // namespace
}  // namespace kbench
