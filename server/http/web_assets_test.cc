// The embedded web app: the generated raw strings hold server/web/ byte for
// byte, HttpServer serves them (installed through Options::routes) with
// their content types and Cache-Control: no-cache next to the tool routes,
// and the files keep the app's rules (no markup built from strings, nothing
// loaded from elsewhere).
#include "server/http/web_assets.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/http/http_server.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::kbench::testing::ReadSourceFile;

// A backend that refuses every tool: the test is about the other routes.
class NoTools : public AgentToolBackend {
 public:
  absl::StatusOr<v1::GetGpuSpecsResponse> GetGpuSpecs(
      const std::string&) override {
    return absl::UnavailableError("no GPU here");
  }
  absl::StatusOr<v1::GetProblemResponse> GetProblem(
      const std::string&, const std::string&) override {
    return absl::NotFoundError("no problem here");
  }
  absl::StatusOr<v1::ListProblemsResponse> ListProblems(
      const std::string&) override {
    return absl::NotFoundError("no problem here");
  }
  absl::StatusOr<v1::Job> RunJob(v1::JobKind,
                                 const v1::KernelRequest&) override {
    return absl::UnavailableError("no worker here");
  }
  absl::StatusOr<v1::CompareRunsResponse> CompareRuns(const std::string&, int,
                                                      int) override {
    return absl::NotFoundError("no session here");
  }
};

constexpr const char* kScripts[] = {"util.js",    "charts.js",  "overview.js",
                                    "profile.js", "session.js", "job.js",
                                    "main.js"};

TEST(WebAssetsTest, EmbeddedFilesMatchTheSourceTree) {
  std::vector<std::string> names = {"index.html", "style.css"};
  names.insert(names.end(), std::begin(kScripts), std::end(kScripts));
  for (const std::string& name : names) {
    const std::string source = ReadSourceFile("server/web/" + name);
    ASSERT_FALSE(source.empty()) << name;
    EXPECT_EQ(std::string(WebAsset(name)), source)
        << name << " differs from its embedded copy: rebuild kb_server_http";
  }
  EXPECT_TRUE(WebAsset("nope.js").empty());
  EXPECT_TRUE(WebAsset("").empty());
}

TEST(WebAssetsTest, IndexLoadsTheScriptsInOrderAndTheStylesheet) {
  const std::string index(WebAsset("index.html"));
  size_t last = 0;
  for (const char* js : kScripts) {
    const size_t at =
        index.find(absl::StrCat("<script src=\"static/", js, "\"></script>"));
    ASSERT_NE(at, std::string::npos) << js << " is not loaded:\n" << index;
    EXPECT_GT(at, last) << js << " is loaded out of order";
    last = at;
  }
  EXPECT_TRUE(absl::StrContains(index, "href=\"static/style.css\"")) << index;
  EXPECT_TRUE(absl::StrContains(index, "id=\"app\"")) << index;
}

TEST(WebAssetsTest, FilesBuildNoMarkupFromStringsAndLoadNothingFromElsewhere) {
  std::string app;
  for (const char* js : kScripts) absl::StrAppend(&app, WebAsset(js));
  ASSERT_FALSE(app.empty());
  // API strings reach the DOM through textContent only.
  for (const char* sink : {"innerHTML", "outerHTML", "insertAdjacentHTML",
                           "document.write", "eval(", "new Function"}) {
    EXPECT_FALSE(absl::StrContains(app, sink)) << "a script uses " << sink;
  }
  // No CDN: the only URL is the SVG namespace.
  std::string rest = app;
  const std::string svg_ns = "http://www.w3.org/2000/svg";
  rest.erase(rest.find(svg_ns), svg_ns.size());
  EXPECT_FALSE(absl::StrContains(rest, "http://")) << "a script";
  EXPECT_FALSE(absl::StrContains(rest, "https://")) << "a script";
  EXPECT_FALSE(absl::StrContains(rest, "//cdn")) << "a script";
  for (const char* name : {"index.html", "style.css"}) {
    const std::string text(WebAsset(name));
    EXPECT_FALSE(absl::StrContains(text, "http://")) << name;
    EXPECT_FALSE(absl::StrContains(text, "https://")) << name;
    EXPECT_FALSE(absl::StrContains(text, "@import")) << name;
  }
}

class WebAssetRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HttpServer::Options options;
    options.listen = "127.0.0.1:0";
    options.routes.push_back(InstallWebAssetRoutes);
    server_ = std::make_unique<HttpServer>(options, &backend_);
    absl::StatusOr<int> port = server_->Start();
    ASSERT_TRUE(port.ok()) << port.status();
    client_ = std::make_unique<httplib::Client>("127.0.0.1", *port);
  }

  // GETs `path` and checks the reply: 200, `content_type`, no-cache, and
  // the embedded bytes of `file`.
  void ExpectAsset(const std::string& path, const std::string& file,
                   const std::string& content_type) {
    httplib::Result res = client_->Get(path);
    ASSERT_TRUE(res) << path << ": " << httplib::to_string(res.error());
    EXPECT_EQ(res->status, 200) << path;
    EXPECT_EQ(res->get_header_value("Content-Type"), content_type) << path;
    EXPECT_EQ(res->get_header_value("Cache-Control"), "no-cache") << path;
    EXPECT_EQ(res->body, std::string(WebAsset(file))) << path;
  }

  NoTools backend_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(WebAssetRoutesTest, ServesTheAppWithContentTypesAndNoCache) {
  ExpectAsset("/", "index.html", "text/html; charset=utf-8");
  for (const char* js : kScripts) {
    ExpectAsset(absl::StrCat("/static/", js), js,
                "application/javascript; charset=utf-8");
  }
  ExpectAsset("/static/style.css", "style.css", "text/css; charset=utf-8");
}

TEST_F(WebAssetRoutesTest, ToolRoutesStillAnswerBesideTheApp) {
  httplib::Result res = client_->Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_TRUE(absl::StrContains(res->body, "\"status\":\"ok\"")) << res->body;
  res = client_->Get("/static/nope.js");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
}

}  // namespace
}  // namespace kbench
