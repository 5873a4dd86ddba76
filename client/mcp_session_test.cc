// The session `kbctl mcp` creates for its tool calls, through a fake
// kbench.v1.Kbench service: created on the first call, reused, or taken
// from the options or the call.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "client/client_fixtures.h"
#include "client/mcp_fixtures.h"
#include "client/mcp_server.h"
#include "grpcpp/grpcpp.h"
#include "kbench/v1/kbench.grpc.pb.h"

namespace kbench {
namespace {

using mcp_testing::Call;
using mcp_testing::FakeBackend;
using mcp_testing::Request;
using nlohmann::json;
using ::testing::HasSubstr;

class FakeSessions final : public v1::Kbench::Service {
 public:
  grpc::Status CreateSession(grpc::ServerContext*,
                             const v1::CreateSessionRequest* req,
                             v1::CreateSessionResponse* resp) override {
    absl::MutexLock lock(&mu_);
    requests_.push_back(*req);
    if (fail_) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no problem");
    resp->mutable_session()->set_id("s-" + std::to_string(requests_.size()));
    resp->mutable_session()->set_problem(req->problem());
    return grpc::Status::OK;
  }
  std::vector<v1::CreateSessionRequest> requests() {
    absl::MutexLock lock(&mu_);
    return requests_;
  }
  void set_fail(bool fail) {
    absl::MutexLock lock(&mu_);
    fail_ = fail;
  }

 private:
  absl::Mutex mu_;
  std::vector<v1::CreateSessionRequest> requests_ ABSL_GUARDED_BY(mu_);
  bool fail_ ABSL_GUARDED_BY(mu_) = false;
};

class McpSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<kbench::testing::LoopbackServer>(&service_);
    ASSERT_TRUE(server_->ok());
    client_ =
        std::make_unique<KbenchClient>(server_->address(), absl::Seconds(30));
  }

  FakeSessions service_;
  std::unique_ptr<kbench::testing::LoopbackServer> server_;
  std::unique_ptr<KbenchClient> client_;
  FakeBackend backend_;
};

TEST_F(McpSessionTest, FirstToolCallCreatesTheSessionThenItIsReused) {
  McpServer mcp(backend_, client_.get(), {});
  // Requests that are not tool calls create none.
  mcp.Handle(Request(1, "initialize", json::object()));
  mcp.Handle(Request(2, "tools/list"));
  EXPECT_TRUE(service_.requests().empty());
  mcp.Handle(Call(3, "get_problem", {{"problem", "gather_linear_bf16"}}));
  mcp.Handle(Call(4, "compile_kernel", {{"kernel_code", "x"}}));
  mcp.Handle(Call(5, "get_gpu_specs", json::object()));
  ASSERT_EQ(service_.requests().size(), 1u);
  EXPECT_EQ(service_.requests()[0].problem(), "gather_linear_bf16");
  EXPECT_EQ(mcp.session_id(), "s-1");
  EXPECT_EQ(backend_.sessions, std::vector<std::string>({"s-1", "s-1", "s-1"}));
}

TEST_F(McpSessionTest, OptionsProblemIsTheCreatedSessionsProblem) {
  McpServer mcp(backend_, client_.get(), {"", "gather_linear_fp32"});
  mcp.Handle(Call(1, "get_problem", {{"problem", "other"}}));
  ASSERT_EQ(service_.requests().size(), 1u);
  EXPECT_EQ(service_.requests()[0].problem(), "gather_linear_fp32");
}

TEST_F(McpSessionTest, GivenSessionIsUsedAndNoneIsCreated) {
  McpServer mcp(backend_, client_.get(), {"s-flag", ""});
  EXPECT_EQ(mcp.session_id(), "s-flag");
  mcp.Handle(Call(1, "get_gpu_specs", json::object()));
  EXPECT_TRUE(service_.requests().empty());
  EXPECT_EQ(backend_.sessions, std::vector<std::string>({"s-flag"}));
}

TEST_F(McpSessionTest, CallNamingASessionCreatesNone) {
  McpServer mcp(backend_, client_.get(), {});
  mcp.Handle(Call(1, "get_gpu_specs", {{"session_id", "s-own"}}));
  EXPECT_TRUE(service_.requests().empty());
  EXPECT_EQ(mcp.session_id(), "");
  // The next call without one creates the client's session.
  mcp.Handle(Call(2, "get_gpu_specs", json::object()));
  EXPECT_EQ(service_.requests().size(), 1u);
  EXPECT_EQ(backend_.sessions, std::vector<std::string>({"s-own", "s-1"}));
}

TEST_F(McpSessionTest, FailedCreationIsAToolErrorAndIsRetried) {
  service_.set_fail(true);
  McpServer mcp(backend_, client_.get(), {});
  std::optional<json> reply =
      mcp.Handle(Call(1, "get_problem", {{"problem", "bogus"}}));
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ((*reply)["result"]["isError"], true) << reply->dump();
  EXPECT_THAT((*reply)["result"]["content"][0]["text"].get<std::string>(),
              HasSubstr("NOT_FOUND: cannot create a kbench session: no "
                        "problem"));
  EXPECT_TRUE(backend_.sessions.empty());
  service_.set_fail(false);
  reply = mcp.Handle(Call(2, "get_problem", json::object()));
  EXPECT_EQ((*reply)["result"]["isError"], false);
  EXPECT_EQ(service_.requests().size(), 2u);
  EXPECT_EQ(mcp.session_id(), "s-2");
}

}  // namespace
}  // namespace kbench
