// The dashboard in a real browser: kbd and a kbworker with the stand-in
// runner (kb_fake_runner), a session seeded through the HTTP tools (six
// turns, two of them timed submits), then tests/browser/dashboard.mjs drives
// headless Chromium (playwright-core) over the overview, the session page
// (verdict, timing table, roofline, kernel-time chart, timeline) and a job
// page, starts a slow job from the page and waits for the timeline to show
// it done without a reload. Everything is kbd's: the web app, /api and the
// tools on its HTTP port. Screenshots land in
// <build>/test-artifacts/dashboard/ (env KBENCH_ARTIFACT_DIR overrides):
// overview, session-top, session-full and job (checked here), plus close-ups
// and in-flight views to look at, and failure.png when a check fails.
//
// Skips when /usr/bin/chromium, node or tests/browser/node_modules is
// missing (scripts/deps.sh installs them).
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"
#include "testing/process.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using ::kbench::testing::BinDir;
using ::kbench::testing::Child;
using ::kbench::testing::KbdProcess;
using ::kbench::testing::ReadSourceFile;
using ::kbench::testing::StartWorker;
using nlohmann::json;

constexpr char kChromium[] = "/usr/bin/chromium";
constexpr char kSession[] = "dashboard-browser-test";
const std::vector<std::string> kScreenshots = {
    "overview.png", "session-top.png", "session-full.png", "job.png"};

std::string SourceDir() {
  const char* root = std::getenv("KBENCH_SOURCE_DIR");
  return root && *root ? root : KBENCH_SOURCE_DIR;
}

// The first executable `name` on PATH, or "".
std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path ? path : "", ':')) {
    if (dir.empty()) continue;
    std::string candidate = absl::StrCat(dir, "/", name);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string ArtifactDir() {
  if (const char* d = std::getenv("KBENCH_ARTIFACT_DIR"); d && *d) return d;
  return (fs::path(BinDir()) / ".." / "test-artifacts" / "dashboard")
      .lexically_normal()
      .string();
}

// An example kernel with a marker the stand-in runner acts on.
std::string Kernel(const std::string& file, const std::string& marker) {
  const std::string source = ReadSourceFile("kernels/examples/" + file);
  EXPECT_FALSE(source.empty()) << file;
  return absl::StrCat(source, "\n// ", marker, "\n");
}

class DashboardBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(kChromium, X_OK) != 0) {
      GTEST_SKIP() << kChromium
                   << " is missing: install Debian's chromium package "
                      "(scripts/deps.sh does)";
    }
    node_ = FindOnPath("node");
    if (node_.empty()) {
      GTEST_SKIP() << "node is not on PATH: install nodejs (scripts/deps.sh "
                      "does)";
    }
    const std::string module =
        SourceDir() +
        "/tests/browser/node_modules/playwright-core/package.json";
    if (!fs::exists(module)) {
      GTEST_SKIP() << module
                   << " is missing: run `npm ci --prefix tests/browser` "
                      "(scripts/deps.sh does)";
    }
    auto kbd = KbdProcess::Start({});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = std::move(*kbd);
    ASSERT_FALSE(kbd_->http_address().empty()) << kbd_->Log();
    // The stand-in runner's topology: this worker's GPU 0 reaches GPU 1
    // and not GPU 2, which the overview shows.
    setenv("KB_FAKE_TOPOLOGY", "0,1,2!", /*overwrite=*/1);
    auto worker = StartWorker(kbd_->address(), BinDir() + "/kb_fake_runner");
    ASSERT_TRUE(worker.ok()) << worker.status();
    worker_ = std::move(*worker);
    for (int i = 0; i < 400; ++i) {
      json r = Call("get_gpu_specs", json::object(), "");
      if (r.is_object() && r["isError"] == false) return;
      absl::SleepFor(absl::Milliseconds(50));
    }
    FAIL() << "the worker did not connect; kbd log:\n" << kbd_->Log();
  }

  // POSTs a tool call to kbd; returns the 200 reply's JSON.
  json Call(const std::string& tool, const json& args,
            const std::string& session) {
    httplib::Client c("http://" + kbd_->http_address());
    c.set_read_timeout(120);
    httplib::Headers headers;
    if (!session.empty()) headers.emplace("X-Kbench-Session", session);
    httplib::Result res =
        c.Post("/v1/tools/" + tool, headers, args.dump(), "application/json");
    EXPECT_TRUE(res) << tool << ": " << httplib::to_string(res.error());
    if (!res) return json();
    EXPECT_EQ(res->status, 200) << tool << ": " << res->body;
    return json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  }

  // A tool call that must succeed; returns its structured content.
  json MustCall(const std::string& tool, const json& args) {
    json r = Call(tool, args, kSession);
    EXPECT_EQ(r["isError"], false) << tool << ": " << r.dump();
    return r.is_object() ? r["structuredContent"] : json();
  }

  std::string node_;
  std::unique_ptr<KbdProcess> kbd_;
  std::unique_ptr<Child> worker_;
};

// The last `n` characters of `log`.
std::string Tail(const std::string& log, size_t n) {
  return log.size() > n ? log.substr(log.size() - n) : log;
}

TEST_F(DashboardBrowserTest, PagesRenderAndTheSessionUpdatesLive) {
  // The agent's session: six turns, two timed submits (42 us, then 17 us,
  // the second with GPU-time and graph bases as a GPU gives them).
  const std::string naive =
      Kernel("gather_linear_naive.cu", "FAKE_KERNEL_US=42");
  const std::string two_stage = Kernel("gather_linear_two_stage.cu",
                                       "FAKE_KERNEL_US=17\n// FAKE_GPU_BASES");
  MustCall("get_problem", json::object());
  MustCall("compile_kernel", {{"kernel_code", naive}});
  MustCall("run_correctness", {{"kernel_code", naive}});
  MustCall("profile_kernel", {{"kernel_code", naive}});
  json first = MustCall("submit_kernel", {{"kernel_code", naive}});
  EXPECT_EQ(first["result"]["verdict"], "VERDICT_PASSED") << first.dump();
  json second = MustCall("submit_kernel", {{"kernel_code", two_stage}});
  EXPECT_EQ(second["result"]["verdict"], "VERDICT_PASSED") << second.dump();
  ASSERT_FALSE(HasFailure()) << kbd_->Log();

  // kbd serves the web app, its /api and the tools on one port.
  const std::string url = absl::StrCat("http://", kbd_->http_address(), "/");
  {
    httplib::Client c("http://" + kbd_->http_address());
    httplib::Result index = c.Get("/");
    ASSERT_TRUE(index) << httplib::to_string(index.error());
    ASSERT_EQ(index->status, 200)
        << "kbd does not serve the web app at /: kbd_main.cc must add "
           "InstallWebAssetRoutes (server/http/web_assets.h) to the HTTP "
           "routes";
    index = c.Get("/api/sessions");
    ASSERT_TRUE(index) << httplib::to_string(index.error());
    ASSERT_EQ(index->status, 200) << index->body;
  }

  const std::string out = ArtifactDir();
  std::error_code ec;
  fs::create_directories(out, ec);
  ASSERT_FALSE(ec) << out << ": " << ec.message();
  for (const std::string& name : kScreenshots) {
    fs::remove(absl::StrCat(out, "/", name), ec);
  }
  fs::remove(out + "/failure.png", ec);

  const testing::CommandResult r =
      testing::RunCommand({node_, SourceDir() + "/tests/browser/dashboard.mjs",
                           "--url", url, "--session", kSession, "--out", out},
                          {}, absl::Seconds(240));
  EXPECT_EQ(r.exit_code, 0)
      << "dashboard.mjs failed (exit " << r.exit_code << ")\nstdout:\n"
      << r.out << "\nstderr:\n"
      << r.err << "\nkbd log (tail):\n"
      << Tail(kbd_->Log(), 4000) << "\nkbworker log (tail):\n"
      << Tail(worker_->Stderr(), 3000);
  std::cerr << r.out;
  for (const std::string& name : kScreenshots) {
    const std::string path = absl::StrCat(out, "/", name);
    ASSERT_TRUE(fs::exists(path)) << path << " was not written";
    std::ifstream in(path, std::ios::binary);
    char magic[8] = {};
    in.read(magic, sizeof(magic));
    EXPECT_EQ(std::string(magic + 1, 3), "PNG") << path;
    EXPECT_GT(fs::file_size(path), 10000u) << path << " looks blank";
  }
}

}  // namespace
}  // namespace kbench
