// The dashboard's JSON API (/api/...) and Prometheus /metrics, with real
// HTTP against a kbd process and a kbworker running the stand-in runner
// (kb_fake_runner). A session is seeded over the HTTP tools (get_problem,
// compile_kernel, run_correctness, profile_kernel, submit_kernel), then
// every route of docs/dashboard.md is checked: shapes, values, filters,
// pagination, compare (which records no turn), and bad requests (404, 400
// naming the parameter, 405), after which the server still serves.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"
#include "testing/process.h"

namespace kbench {
namespace {

using ::kbench::testing::BinDir;
using ::kbench::testing::Child;
using ::kbench::testing::KbdProcess;
using ::kbench::testing::ReadSourceFile;
using ::kbench::testing::StartWorker;
using nlohmann::json;

constexpr char kSession[] = "s-dash";
constexpr char kWorker[] = "dash-w1";
constexpr char kHost[] = "dash-host";

std::string Naive() {
  return ReadSourceFile("kernels/examples/gather_linear_naive.cu");
}
// The submitted source: the naive kernel with one more line.
std::string Tuned() { return Naive() + "// tuned\n"; }

// Percent-encodes a query value.
std::string Encode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.') {
      out += static_cast<char>(c);
    } else {
      out += absl::StrCat("%", absl::Hex(c, absl::kZeroPad2));
    }
  }
  return out;
}

// A kbd with one fake-runner worker; `Seed` adds the session.
class Server {
 public:
  void Start() {
    auto kbd = KbdProcess::Start({});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = std::move(*kbd);
    ASSERT_FALSE(kbd_->http_address().empty()) << kbd_->Log();
    auto worker = StartWorker(kbd_->address(), BinDir() + "/kb_fake_runner", 0,
                              {"--worker-id", kWorker, "--host-id", kHost});
    ASSERT_TRUE(worker.ok()) << worker.status();
    worker_ = std::move(*worker);
    for (int i = 0; i < 400; ++i) {
      httplib::Result res = Client().Get("/api/workers");
      if (res && res->status == 200) {
        json body = json::parse(res->body, nullptr, false);
        if (body.is_object() && body["workers"].size() == 1) return;
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    FAIL() << "the worker did not connect; kbd log:\n" << kbd_->Log();
  }

  httplib::Client Client() const {
    httplib::Client c("http://" + kbd_->http_address());
    c.set_connection_timeout(10);
    c.set_read_timeout(120);
    return c;
  }

  // A tool call over HTTP; returns the 200 reply's JSON.
  json Call(const std::string& tool, const json& args,
            const std::string& session = "") const {
    httplib::Headers h;
    if (!session.empty()) h.emplace("X-Kbench-Session", session);
    httplib::Result res =
        Client().Post("/v1/tools/" + tool, h, args.dump(), "application/json");
    EXPECT_TRUE(res) << httplib::to_string(res.error());
    if (!res) return json();
    EXPECT_EQ(res->status, 200) << res->body;
    json body = json::parse(res->body, nullptr, false);
    EXPECT_EQ(body["isError"], false) << tool << ": " << res->body;
    return body;
  }

  // Turns 1..5 of kSession, plus a compile outside any session.
  void Seed() {
    Call("get_problem", json::object(), kSession);
    Call("compile_kernel", {{"kernel_code", Naive()}}, kSession);
    Call("run_correctness", {{"kernel_code", Naive()}}, kSession);
    Call("profile_kernel", {{"kernel_code", Naive()}}, kSession);
    Call("submit_kernel", {{"kernel_code", Tuned()}}, kSession);
    Call("compile_kernel", {{"kernel_code", Naive()}});
  }

  KbdProcess* kbd() { return kbd_.get(); }

 private:
  std::unique_ptr<KbdProcess> kbd_;
  std::unique_ptr<Child> worker_;
};

class DashboardApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new Server();
    server_->Start();
    if (!::testing::Test::HasFatalFailure()) server_->Seed();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(server_, nullptr);
    ASSERT_NE(server_->kbd(), nullptr);
  }

  static httplib::Result Get(const std::string& path) {
    return server_->Client().Get(path.c_str());
  }

  // A 200 application/json reply to GET `path`, parsed.
  static json GetJson(const std::string& path) {
    httplib::Result res = Get(path);
    EXPECT_TRUE(res) << path << ": " << httplib::to_string(res.error());
    if (!res) return json();
    EXPECT_EQ(res->status, 200) << path << ": " << res->body;
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
    json body = json::parse(res->body, nullptr, false);
    EXPECT_FALSE(body.is_discarded()) << res->body;
    return body;
  }

  // A JSON error with HTTP `status` and `code`; returns its message.
  static std::string ErrorOf(const httplib::Result& res, int status,
                             const std::string& code) {
    EXPECT_TRUE(res) << httplib::to_string(res.error());
    if (!res) return "";
    EXPECT_EQ(res->status, status) << res->body;
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
    json body = json::parse(res->body, nullptr, false);
    EXPECT_EQ(body["error"]["code"], code) << res->body;
    EXPECT_EQ(body["error"]["status"], status) << res->body;
    return body["error"]["message"].is_string()
               ? body["error"]["message"].get<std::string>()
               : "";
  }
  static std::string GetError(const std::string& path, int status,
                              const std::string& code) {
    return ErrorOf(Get(path), status, code);
  }

  static Server* server_;
};

Server* DashboardApiTest::server_ = nullptr;

TEST_F(DashboardApiTest, SessionsListTheSeededSessionWithItsFigures) {
  json body = GetJson("/api/sessions");
  ASSERT_TRUE(body["sessions"].is_array()) << body.dump();
  ASSERT_EQ(body["sessions"].size(), 1u) << body.dump();
  const json& s = body["sessions"][0];
  EXPECT_EQ(s["id"], kSession);
  EXPECT_EQ(s["problem"], "gather_linear_fp32");
  EXPECT_EQ(s["status"], "submitted");
  EXPECT_EQ(s["turns"], 5);
  // int64 fields are JSON strings (protobuf's JSON mapping).
  ASSERT_TRUE(s["created_unix_ms"].is_string()) << s.dump();
  int64_t created = 0;
  EXPECT_TRUE(
      absl::SimpleAtoi(s["created_unix_ms"].get<std::string>(), &created));
  EXPECT_GT(created, 0);
  // The fake runner times every kernel at a 2.0x speedup.
  EXPECT_EQ(s["best_speedup"], 2.0);
  EXPECT_EQ(s["last_verdict"], "VERDICT_PASSED");
  EXPECT_EQ(s["last_tool"], "submit_kernel");

  EXPECT_EQ(GetJson("/api/sessions?limit=1")["sessions"].size(), 1u);
  EXPECT_EQ(GetJson("/api/sessions?limit=200")["sessions"].size(), 1u);
}

TEST_F(DashboardApiTest, SessionHasItsProblemAndTurnsWithTheirJobs) {
  json body = GetJson(absl::StrCat("/api/sessions/", kSession));
  EXPECT_EQ(body["session"]["id"], kSession);
  EXPECT_EQ(body["session"]["turns"], 5);
  EXPECT_EQ(body["problem"]["name"], "gather_linear_fp32");
  const json& turns = body["turns"];
  ASSERT_EQ(turns.size(), 5u) << body.dump();
  const std::vector<std::string> tools = {"get_problem", "compile_kernel",
                                          "run_correctness", "profile_kernel",
                                          "submit_kernel"};
  for (size_t i = 0; i < turns.size(); ++i) {
    const json& t = turns[i];
    EXPECT_EQ(t["seq"], i + 1);
    EXPECT_EQ(t["tool"], tools[i]);
    EXPECT_EQ(t["session_id"], kSession);
    EXPECT_EQ(t["verdict"], "VERDICT_PASSED") << t.dump();
    if (i == 0) {
      // get_problem runs no job.
      EXPECT_EQ(t["job_id"], "");
      EXPECT_FALSE(t.contains("job")) << t.dump();
      continue;
    }
    ASSERT_TRUE(t.contains("job")) << t.dump();
    EXPECT_EQ(t["job"]["id"], t["job_id"]);
    EXPECT_EQ(t["job"]["stage"], "STAGE_DONE");
    EXPECT_EQ(t["job"]["session_id"], kSession);
    EXPECT_EQ(t["job"]["result"]["verdict"], "VERDICT_PASSED");
  }
  // Jobs come with their full results.
  EXPECT_EQ(turns[1]["job"]["kind"], "JOB_KIND_COMPILE");
  EXPECT_EQ(turns[1]["job"]["result"]["compile"]["success"], true);
  EXPECT_EQ(turns[2]["job"]["result"]["correctness"]["trials"].size(), 6u)
      << turns[2].dump();
  EXPECT_EQ(turns[4]["job"]["result"]["timing"]["speedup"], 2.0);
  EXPECT_EQ(turns[4]["job"]["result"]["timing"]["kernel"]["median_us"], 10.0);
  EXPECT_EQ(turns[4]["job"]["worker_id"], kWorker);
}

TEST_F(DashboardApiTest, CompareShowsTheDiffAndRecordsNoTurn) {
  const std::string base = absl::StrCat("/api/sessions/", kSession);
  json cmp = GetJson(base + "/compare?a=3&b=5");
  EXPECT_EQ(cmp["a"]["turn"], 3);
  EXPECT_EQ(cmp["a"]["tool"], "run_correctness");
  EXPECT_EQ(cmp["a"]["verdict"], "VERDICT_PASSED");
  EXPECT_EQ(cmp["a"]["trials_passed"], 6);
  EXPECT_EQ(cmp["b"]["turn"], 5);
  EXPECT_EQ(cmp["b"]["tool"], "submit_kernel");
  EXPECT_EQ(cmp["b"]["speedup"], 2.0);
  EXPECT_EQ(cmp["lines_added"], 1);
  EXPECT_EQ(cmp["lines_removed"], 0);
  EXPECT_NE(cmp["source_diff"].get<std::string>().find("+// tuned"),
            std::string::npos)
      << cmp.dump();
  // Turn 3 was not timed: no change figures.
  EXPECT_EQ(cmp["kernel_time_change_pct"], 0.0);

  // Turns 4 and 5 are both timed.
  json timed = GetJson(base + "/compare?a=4&b=5");
  EXPECT_EQ(timed["kernel_time_change_pct"], 0.0);
  EXPECT_EQ(timed["a"]["kernel_median_us"], 10.0);

  // No compare_runs turn was recorded.
  json session = GetJson(base);
  EXPECT_EQ(session["turns"].size(), 5u);
  EXPECT_EQ(session["session"]["turns"], 5);
  EXPECT_EQ(GetJson("/api/sessions")["sessions"][0]["last_tool"],
            "submit_kernel");

  // Turn 1 ran no kernel; turn 9 does not exist; nor does the session.
  EXPECT_NE(GetError(base + "/compare?a=1&b=5", 409, "FAILED_PRECONDITION")
                .find("ran no kernel"),
            std::string::npos);
  EXPECT_NE(
      GetError(base + "/compare?a=3&b=9", 404, "NOT_FOUND").find("no turn 9"),
      std::string::npos);
  EXPECT_NE(GetError("/api/sessions/s-nope/compare?a=1&b=2", 404, "NOT_FOUND")
                .find("s-nope"),
            std::string::npos);
}

TEST_F(DashboardApiTest, JobsAreFilteredAndPaginated) {
  json all = GetJson("/api/jobs");
  ASSERT_EQ(all["jobs"].size(), 5u) << all.dump();
  EXPECT_EQ(all["next_page_token"], "");
  // Newest first: the compile outside the session.
  EXPECT_EQ(all["jobs"][0]["session_id"], "");
  EXPECT_EQ(all["jobs"][0]["kind"], "JOB_KIND_COMPILE");

  const std::string s = absl::StrCat("/api/jobs?session=", kSession);
  json mine = GetJson(s);
  ASSERT_EQ(mine["jobs"].size(), 4u) << mine.dump();
  const std::vector<std::string> kinds = {"JOB_KIND_SUBMIT", "JOB_KIND_PROFILE",
                                          "JOB_KIND_CORRECTNESS",
                                          "JOB_KIND_COMPILE"};
  for (size_t i = 0; i < kinds.size(); ++i) {
    const json& j = mine["jobs"][i];
    EXPECT_EQ(j["kind"], kinds[i]);
    EXPECT_EQ(j["session_id"], kSession);
    EXPECT_EQ(j["stage"], "STAGE_DONE");
    // Results are trimmed to the verdict and message.
    EXPECT_EQ(j["result"]["verdict"], "VERDICT_PASSED");
    EXPECT_TRUE(j["result"].contains("message"));
    EXPECT_FALSE(j["result"].contains("timing")) << j.dump();
    EXPECT_FALSE(j["result"].contains("compile")) << j.dump();
  }

  EXPECT_EQ(GetJson(s + "&stage=done")["jobs"].size(), 4u);
  EXPECT_EQ(GetJson("/api/jobs?stage=done")["jobs"].size(), 5u);
  EXPECT_EQ(GetJson(s + "&stage=running")["jobs"].size(), 0u);
  EXPECT_EQ(GetJson("/api/jobs?stage=queued")["jobs"].size(), 0u);
  EXPECT_EQ(GetJson("/api/jobs?session=s-nobody")["jobs"].size(), 0u);

  json page1 = GetJson(s + "&page_size=3");
  ASSERT_EQ(page1["jobs"].size(), 3u);
  const std::string token = page1["next_page_token"];
  ASSERT_FALSE(token.empty());
  json page2 = GetJson(s + "&page_size=3&page_token=" + Encode(token));
  ASSERT_EQ(page2["jobs"].size(), 1u) << page2.dump();
  EXPECT_EQ(page2["jobs"][0]["kind"], "JOB_KIND_COMPILE");
  EXPECT_EQ(page2["next_page_token"], "");
  for (const json& j : page1["jobs"]) {
    EXPECT_NE(j["id"], page2["jobs"][0]["id"]);
  }
}

TEST_F(DashboardApiTest, JobHasItsFullResultAndSource) {
  json mine =
      GetJson(absl::StrCat("/api/jobs?session=", kSession, "&page_size=1"));
  ASSERT_EQ(mine["jobs"].size(), 1u);
  const std::string id = mine["jobs"][0]["id"];
  json body = GetJson("/api/jobs/" + id);
  EXPECT_EQ(body["job"]["id"], id);
  EXPECT_EQ(body["job"]["kind"], "JOB_KIND_SUBMIT");
  EXPECT_EQ(body["job"]["result"]["timing"]["speedup"], 2.0);
  EXPECT_EQ(body["job"]["result"]["gpu"]["arch"], "sm_90");
  EXPECT_TRUE(body["job"]["finished_unix_ms"].is_string());
  EXPECT_EQ(body["source"], Tuned());

  const std::string digest = body["job"]["source_digest"];
  ASSERT_EQ(digest.size(), 64u);
  json source = GetJson("/api/sources/" + digest);
  EXPECT_EQ(source["digest"], digest);
  EXPECT_EQ(source["text"], Tuned());
}

TEST_F(DashboardApiTest, WorkersAndProblems) {
  json problems = GetJson("/api/problems");
  ASSERT_EQ(problems["problems"].size(), 2u) << problems.dump();
  std::vector<std::string> names;
  for (const json& p : problems["problems"]) {
    names.push_back(p["name"].get<std::string>());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"gather_linear_bf16",
                                             "gather_linear_fp32"}));

  json body = GetJson("/api/workers");
  EXPECT_EQ(body["queue_depth"], 0);
  ASSERT_EQ(body["workers"].size(), 1u) << body.dump();
  const json& w = body["workers"][0];
  EXPECT_EQ(w["worker_id"], kWorker);
  EXPECT_EQ(w["gpu_index"], 0);
  EXPECT_EQ(w["host_id"], kHost);
  EXPECT_EQ(w["spec"]["name"], "kbench fake GPU (tests only)");
  EXPECT_EQ(w["busy"], false);
  EXPECT_EQ(w["current_job_id"], "");
  // The correctness, profile and submit jobs ran on it.
  EXPECT_EQ(w["jobs_done"], "3");
  EXPECT_TRUE(w["last_seen_unix_ms"].is_string());
  ASSERT_TRUE(w["busy_seconds"].is_number()) << w.dump();
  EXPECT_GT(w["busy_seconds"].get<double>(), 0);
  EXPECT_EQ(w["jobs_per_minute"], 0.3);
}

// The sample lines of a Prometheus text, by "name{labels}".
std::map<std::string, double> Samples(const std::string& text) {
  std::map<std::string, double> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "#")) continue;
    const size_t space = line.rfind(' ');
    EXPECT_NE(space, absl::string_view::npos) << line;
    if (space == absl::string_view::npos) continue;
    const std::string value(line.substr(space + 1));
    out[std::string(line.substr(0, space))] =
        value == "+Inf" ? INFINITY : std::strtod(value.c_str(), nullptr);
  }
  return out;
}

TEST_F(DashboardApiTest, MetricsCountTheSession) {
  httplib::Result res = Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"),
            "text/plain; version=0.0.4; charset=utf-8");
  const std::string& text = res->body;
  for (const char* family :
       {"kbench_queue_depth gauge", "kbench_workers_connected gauge",
        "kbench_jobs gauge", "kbench_jobs_finished_total counter",
        "kbench_tool_duration_seconds histogram",
        "kbench_gpu_busy_seconds_total counter"}) {
    EXPECT_NE(text.find(absl::StrCat("# TYPE ", family, "\n")),
              std::string::npos)
        << family << " in\n"
        << text;
  }
  std::map<std::string, double> s = Samples(text);
  EXPECT_EQ(s["kbench_queue_depth"], 0);
  EXPECT_EQ(s["kbench_workers_connected"], 1);
  for (const char* stage : {"queued", "compiling", "waiting_gpu", "running"}) {
    const std::string key = absl::StrCat("kbench_jobs{stage=\"", stage, "\"}");
    ASSERT_EQ(s.count(key), 1u) << key << " in\n" << text;
    EXPECT_EQ(s[key], 0);
  }
  EXPECT_EQ(s["kbench_jobs_finished_total{kind=\"submit\",verdict=\"passed\"}"],
            1);
  EXPECT_EQ(
      s["kbench_jobs_finished_total{kind=\"compile\",verdict=\"passed\"}"], 2);
  EXPECT_EQ(
      s["kbench_jobs_finished_total{kind=\"correctness\",verdict=\"passed\"}"],
      1);
  const std::string submit = "tool=\"submit_kernel\"";
  EXPECT_GE(s[absl::StrCat("kbench_tool_duration_seconds_count{", submit, "}")],
            1);
  EXPECT_EQ(
      s[absl::StrCat("kbench_tool_duration_seconds_bucket{", submit,
                     ",le=\"+Inf\"}")],
      s[absl::StrCat("kbench_tool_duration_seconds_count{", submit, "}")]);
  EXPECT_EQ(s.count(absl::StrCat("kbench_tool_duration_seconds_bucket{", submit,
                                 ",le=\"0.005\"}")),
            1u);
  EXPECT_GT(s[absl::StrCat("kbench_tool_duration_seconds_sum{", submit, "}")],
            0);
  EXPECT_EQ(s["kbench_tool_duration_seconds_count{tool=\"compile_kernel\"}"],
            2);
  EXPECT_GT(s[absl::StrCat("kbench_gpu_busy_seconds_total{worker=\"", kWorker,
                           "\"}")],
            0);
}

TEST_F(DashboardApiTest, BadRequestsGetJsonErrorsAndTheServerKeepsServing) {
  // Unknown ids.
  EXPECT_NE(GetError("/api/jobs/j-nope", 404, "NOT_FOUND").find("j-nope"),
            std::string::npos);
  EXPECT_NE(GetError("/api/sessions/s-nope", 404, "NOT_FOUND").find("s-nope"),
            std::string::npos);
  EXPECT_NE(GetError("/api/sources/" + std::string(64, '0'), 404, "NOT_FOUND")
                .find("no source"),
            std::string::npos);
  GetError("/api/sources/abc", 404, "NOT_FOUND");

  // page_size: not an integer, out of range.
  for (const char* bad : {"x", "0", "500", "-1", "2.5", "", "+5", "1e2"}) {
    const std::string m = GetError(absl::StrCat("/api/jobs?page_size=", bad),
                                   400, "INVALID_ARGUMENT");
    EXPECT_NE(m.find("page_size"), std::string::npos) << bad << ": " << m;
    EXPECT_NE(m.find("1 to 200"), std::string::npos) << bad << ": " << m;
  }
  EXPECT_EQ(GetJson("/api/jobs?page_size=200")["jobs"].size(), 5u);
  EXPECT_EQ(GetJson("/api/jobs?page_size=1")["jobs"].size(), 1u);
  const std::string twice =
      GetError("/api/jobs?page_size=1&page_size=2", 400, "INVALID_ARGUMENT");
  EXPECT_NE(twice.find("page_size is given 2 times"), std::string::npos)
      << twice;

  // stage: only the lower-case names.
  for (const char* bad : {"finished", "DONE", "STAGE_DONE"}) {
    const std::string m = GetError(absl::StrCat("/api/jobs?stage=", bad), 400,
                                   "INVALID_ARGUMENT");
    EXPECT_NE(m.find("stage must be one of queued, compiling, waiting_gpu, "
                     "running, done"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find(bad), std::string::npos) << m;
  }
  EXPECT_NE(
      GetError("/api/jobs?page_token=not-a-token", 400, "INVALID_ARGUMENT")
          .find("page_token"),
      std::string::npos);

  // limit.
  for (const char* bad : {"0", "201", "abc", "-3"}) {
    const std::string m = GetError(absl::StrCat("/api/sessions?limit=", bad),
                                   400, "INVALID_ARGUMENT");
    EXPECT_NE(m.find("limit must be an integer from 1 to 200"),
              std::string::npos)
        << bad << ": " << m;
  }

  // compare: a and b are required turn numbers.
  const std::string cmp = absl::StrCat("/api/sessions/", kSession, "/compare");
  std::string m = GetError(cmp + "?b=5", 400, "INVALID_ARGUMENT");
  EXPECT_NE(m.find("query parameter a is missing"), std::string::npos) << m;
  m = GetError(cmp + "?a=3", 400, "INVALID_ARGUMENT");
  EXPECT_NE(m.find("query parameter b is missing"), std::string::npos) << m;
  m = GetError(cmp, 400, "INVALID_ARGUMENT");
  EXPECT_NE(m.find("parameter a"), std::string::npos) << m;
  m = GetError(cmp + "?a=abc&b=5", 400, "INVALID_ARGUMENT");
  EXPECT_NE(m.find("query parameter a must be an integer from 1 to"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("'abc'"), std::string::npos) << m;
  m = GetError(cmp + "?a=3&b=0", 400, "INVALID_ARGUMENT");
  EXPECT_NE(m.find("query parameter b must be"), std::string::npos) << m;
  m = GetError(cmp + "?a=3&b=99999999999", 400, "INVALID_ARGUMENT");
  EXPECT_NE(m.find("parameter b"), std::string::npos) << m;

  // Only GET.
  httplib::Client c = server_->Client();
  httplib::Result post = c.Post("/api/jobs", "{}", "application/json");
  m = ErrorOf(post, 405, "METHOD_NOT_ALLOWED");
  EXPECT_NE(m.find("POST /api/jobs is not served"), std::string::npos) << m;
  ASSERT_TRUE(post);
  EXPECT_EQ(post->get_header_value("Allow"), "GET");
  httplib::Result del = c.Delete(absl::StrCat("/api/sessions/", kSession));
  ErrorOf(del, 405, "METHOD_NOT_ALLOWED");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->get_header_value("Allow"), "GET");
  httplib::Result put_metrics = c.Put("/metrics", "", "text/plain");
  ErrorOf(put_metrics, 405, "METHOD_NOT_ALLOWED");
  httplib::Result empty_post = c.Post("/api/workers", "", "application/json");
  m = ErrorOf(empty_post, 405, "METHOD_NOT_ALLOWED");
  EXPECT_NE(m.find("use GET /api/workers"), std::string::npos) << m;

  // Unknown routes list the API.
  m = GetError("/api/nothing", 404, "NOT_FOUND");
  EXPECT_NE(m.find("/api/jobs"), std::string::npos) << m;
  EXPECT_NE(m.find("/metrics"), std::string::npos) << m;

  // Still serving, with nothing changed.
  EXPECT_EQ(GetJson("/healthz")["status"], "ok");
  EXPECT_EQ(
      GetJson(absl::StrCat("/api/jobs?session=", kSession))["jobs"].size(), 4u);
  EXPECT_EQ(GetJson("/api/sessions")["sessions"][0]["turns"], 5);
}

}  // namespace
}  // namespace kbench
