// Bad requests to the dashboard's JSON API: 404 for unknown ids, 400
// naming the parameter, 405 for other methods, each a JSON error; after
// them the server still serves (DashboardApiTest's kbd and seeded
// session).
#include <string>
#include <vector>

#include "tests/integration/dashboard_api_fixture.h"

namespace kbench {
namespace dashboard_test {
namespace {

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
}  // namespace dashboard_test
}  // namespace kbench
