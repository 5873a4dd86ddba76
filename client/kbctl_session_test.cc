// `kbctl session create|show|list` and `kbctl diff`, in-process against a
// fake kbench.v1.Kbench service on a loopback port: the requests sent, the
// text and JSON printed, exit codes and errors.
#include <stdlib.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "client/client_fixtures.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "nlohmann/json.hpp"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

class FakeSessions final : public v1::Kbench::Service {
 public:
  grpc::Status CreateSession(grpc::ServerContext*,
                             const v1::CreateSessionRequest* req,
                             v1::CreateSessionResponse* resp) override {
    absl::MutexLock lock(&mu_);
    last_create_ = *req;
    if (req->problem() == "bogus") {
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          "no problem named 'bogus'");
    }
    resp->mutable_session()->set_id("s-new");
    resp->mutable_session()->set_problem(req->problem());
    resp->mutable_session()->set_status("open");
    return grpc::Status::OK;
  }
  grpc::Status GetSession(grpc::ServerContext*,
                          const v1::GetSessionRequest* req,
                          v1::GetSessionResponse* resp) override {
    if (req->session_id() != "s-1") {
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          "no session '" + req->session_id() + "'");
    }
    v1::Session* s = resp->mutable_session();
    s->set_id("s-1");
    s->set_problem("gather_linear_fp32");
    s->set_status("open");
    s->set_turns(2);
    s->set_created_unix_ms(1767225600000);  // 2026-01-01T00:00:00Z.
    s->set_updated_unix_ms(1767225660000);
    v1::Turn* t = resp->add_turns();
    t->set_seq(1);
    t->set_tool("get_problem");
    t->set_verdict(v1::VERDICT_PASSED);
    t->set_duration_ms(2.4);
    t = resp->add_turns();
    t->set_seq(2);
    t->set_tool("compile_kernel");
    t->set_verdict(v1::VERDICT_COMPILE_ERROR);
    t->set_duration_ms(187.6);
    t->set_job_id("j-42");
    return grpc::Status::OK;
  }
  grpc::Status ListSessions(grpc::ServerContext*,
                            const v1::ListSessionsRequest* req,
                            v1::ListSessionsResponse* resp) override {
    absl::MutexLock lock(&mu_);
    last_list_limit_ = req->limit();
    if (empty_) return grpc::Status::OK;
    for (const char* id : {"s-2", "s-1"}) {
      v1::Session* s = resp->add_sessions();
      s->set_id(id);
      s->set_problem("gather_linear_fp32");
      s->set_status(std::string(id) == "s-2" ? "submitted" : "open");
      s->set_turns(std::string(id) == "s-2" ? 9 : 2);
      s->set_created_unix_ms(1767225600000);
      s->set_updated_unix_ms(1767225660000);
    }
    return grpc::Status::OK;
  }
  grpc::Status CompareRuns(grpc::ServerContext*,
                           const v1::CompareRunsRequest* req,
                           v1::CompareRunsResponse* resp) override {
    absl::MutexLock lock(&mu_);
    last_compare_ = *req;
    if (req->turn_a() == 1) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          "turn 1 (get_problem) ran no kernel");
    }
    resp->mutable_a()->set_turn(req->turn_a());
    resp->mutable_a()->set_tool("compile_kernel");
    resp->mutable_a()->set_verdict(v1::VERDICT_COMPILE_ERROR);
    resp->mutable_b()->set_turn(req->turn_b());
    resp->mutable_b()->set_tool("compile_kernel");
    resp->mutable_b()->set_verdict(v1::VERDICT_PASSED);
    resp->set_source_diff(
        "--- a\n+++ b\n@@ -1 +1 @@\n-int x = y;\n+int x = 0;\n");
    resp->set_lines_added(1);
    resp->set_lines_removed(1);
    return grpc::Status::OK;
  }

  void set_empty() {
    absl::MutexLock lock(&mu_);
    empty_ = true;
  }
  v1::CreateSessionRequest last_create() {
    absl::MutexLock lock(&mu_);
    return last_create_;
  }
  v1::CompareRunsRequest last_compare() {
    absl::MutexLock lock(&mu_);
    return last_compare_;
  }
  int last_list_limit() {
    absl::MutexLock lock(&mu_);
    return last_list_limit_;
  }

 private:
  absl::Mutex mu_;
  v1::CreateSessionRequest last_create_ ABSL_GUARDED_BY(mu_);
  v1::CompareRunsRequest last_compare_ ABSL_GUARDED_BY(mu_);
  int last_list_limit_ ABSL_GUARDED_BY(mu_) = -1;
  bool empty_ ABSL_GUARDED_BY(mu_) = false;
};

using Result = ::kbench::testing::KbctlResult;

class KbctlSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("KBENCH_SERVER");
    unsetenv("KBENCH_SESSION");
    server_ = std::make_unique<kbench::testing::LoopbackServer>(&service_);
    ASSERT_TRUE(server_->ok());
    address_ = server_->address();
  }

  Result Kbctl(std::vector<std::string> args) {
    args.insert(args.end(), {"--server", address_});
    return ::kbench::testing::RunKbctlCommand(std::move(args));
  }

  FakeSessions service_;
  std::unique_ptr<kbench::testing::LoopbackServer> server_;
  std::string address_;
};

TEST_F(KbctlSessionTest, CreatePrintsTheIdAndSendsTheProblem) {
  Result r = Kbctl({"session", "create", "--problem", "gather_linear_bf16"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "s-new\n");
  EXPECT_EQ(service_.last_create().problem(), "gather_linear_bf16");

  r = Kbctl({"session", "create"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "s-new\n");
  EXPECT_EQ(service_.last_create().problem(), "");

  r = Kbctl({"session", "create", "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["session"]["id"], "s-new");
}

TEST_F(KbctlSessionTest, CreateWithAnUnknownProblemFails) {
  const Result r = Kbctl({"session", "create", "--problem", "bogus"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.out, IsEmpty());
  EXPECT_THAT(r.err, HasSubstr("kbctl: NOT_FOUND: no problem named 'bogus'"));
}

TEST_F(KbctlSessionTest, ShowPrintsTheSessionAndOneLinePerTurn) {
  const Result r = Kbctl({"session", "show", "s-1"});
  EXPECT_EQ(r.code, 0) << r.err;
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0],
            "session s-1: problem gather_linear_fp32, open, 2 turn(s), created "
            "2026-01-01T00:00:00Z, updated 2026-01-01T00:01:00Z");
  EXPECT_THAT(lines[1], HasSubstr("SEQ"));
  EXPECT_THAT(lines[2],
              ::testing::MatchesRegex(" *1 +get_problem +passed +2 ms +-"));
  EXPECT_THAT(lines[3],
              ::testing::MatchesRegex(
                  " *2 +compile_kernel +compile_error +188 ms +j-42"));
}

TEST_F(KbctlSessionTest, ShowOfAnUnknownSessionIsNotFound) {
  const Result r = Kbctl({"session", "show", "s-none"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("NOT_FOUND: no session 's-none'"));
}

TEST_F(KbctlSessionTest, ShowJsonIsTheResponse) {
  const Result r = Kbctl({"--json", "session", "show", "s-1"});
  EXPECT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["session"]["id"], "s-1");
  ASSERT_EQ(j["turns"].size(), 2u);
  EXPECT_EQ(j["turns"][1]["job_id"], "j-42");
}

TEST_F(KbctlSessionTest, ListPrintsOneLinePerSession) {
  Result r = Kbctl({"session", "list", "--limit", "5"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(service_.last_list_limit(), 5);
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_THAT(lines[0], HasSubstr("PROBLEM"));
  EXPECT_THAT(lines[1], ::testing::MatchesRegex(
                            "s-2 +gather_linear_fp32 +submitted +9 .*"));
  EXPECT_THAT(lines[2],
              ::testing::MatchesRegex("s-1 +gather_linear_fp32 +open +2 .*"));

  service_.set_empty();
  r = Kbctl({"session", "list"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "no sessions\n");
  EXPECT_EQ(service_.last_list_limit(), 0);
}

TEST_F(KbctlSessionTest, SessionNeedsASubcommand) {
  const Result r = Kbctl({"session"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT"));
}

TEST_F(KbctlSessionTest, DiffPrintsTheComparison) {
  const Result r = Kbctl({"diff", "s-1", "2", "3"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(service_.last_compare().session_id(), "s-1");
  EXPECT_EQ(service_.last_compare().turn_a(), 2);
  EXPECT_EQ(service_.last_compare().turn_b(), 3);
  EXPECT_THAT(r.out, HasSubstr("A: turn 2 compile_kernel -> compile_error"));
  EXPECT_THAT(r.out, HasSubstr("B: turn 3 compile_kernel -> passed"));
  EXPECT_THAT(r.out, HasSubstr("source: +1 -1 lines"));
  EXPECT_THAT(r.out, HasSubstr("+int x = 0;"));
}

TEST_F(KbctlSessionTest, DiffJsonIsTheResponse) {
  const Result r = Kbctl({"diff", "s-1", "2", "3", "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["a"]["turn"], 2);
  EXPECT_EQ(j["b"]["verdict"], "VERDICT_PASSED");
  EXPECT_EQ(j["lines_added"], 1);
}

TEST_F(KbctlSessionTest, DiffErrorsAndBadTurns) {
  Result r = Kbctl({"diff", "s-1", "1", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("FAILED_PRECONDITION: turn 1 (get_problem) "
                               "ran no kernel"));
  r = Kbctl({"diff", "s-1", "0", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT"));
  r = Kbctl({"diff", "s-1", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("TURN_B"));
  r = Kbctl({"diff", "s-1", "two", "3"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.out, IsEmpty());
}

}  // namespace
}  // namespace kbench
