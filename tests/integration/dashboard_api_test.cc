// The dashboard's JSON API (/api/...) and Prometheus /metrics, with real
// HTTP against a kbd process and a kbworker running the stand-in runner
// (kb_fake_runner), after the session DashboardApiTest seeds: every route
// of docs/dashboard.md, its shapes, values, filters, pagination, compare
// (which records no turn) and the metrics. Bad requests are in
// dashboard_errors_test.cc.
#include <string>
#include <vector>

#include "tests/integration/dashboard_api_fixture.h"

namespace kbench {
namespace dashboard_test {
namespace {

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

}  // namespace
}  // namespace dashboard_test
}  // namespace kbench
