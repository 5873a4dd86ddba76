// Sessions, GetProblem and CompareRuns over gRPC against a kbd run
// in-process (no GPU needed: the turns are compile_kernel calls).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "server/kbd.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

class SessionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Kbd::Options o;
    o.listen = "127.0.0.1:0";
    o.http_listen = "off";
    o.data_dir = dir_.path();
    o.compile_threads = 2;
    kbd_ = std::make_unique<Kbd>(o);
    ASSERT_TRUE(kbd_->Start().ok());
    stub_ = v1::Kbench::NewStub(grpc::CreateChannel(
        kbd_->address(), grpc::InsecureChannelCredentials()));
  }
  grpc::Status Compile(const std::string& session, const std::string& source) {
    v1::CompileKernelRequest req;
    req.mutable_kernel()->set_source(source);
    req.mutable_kernel()->set_session_id(session);
    v1::CompileKernelResponse resp;
    grpc::ClientContext ctx;
    return stub_->CompileKernel(&ctx, req, &resp);
  }
  v1::GetSessionResponse GetSession(const std::string& id, int want_turns) {
    v1::GetSessionResponse resp;
    for (int i = 0; i < 100; ++i) {  // Turns are recorded as jobs finish.
      v1::GetSessionRequest req;
      req.set_session_id(id);
      grpc::ClientContext ctx;
      resp.Clear();
      if (stub_->GetSession(&ctx, req, &resp).ok() &&
          resp.turns_size() >= want_turns) {
        break;
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
    return resp;
  }

  testing::TempDir dir_;
  std::unique_ptr<Kbd> kbd_;
  std::unique_ptr<v1::Kbench::Stub> stub_;
};

TEST_F(SessionsTest, AWholeSessionOverGrpc) {
  v1::CreateSessionRequest create;
  create.set_problem("gather_linear_fp32");
  v1::CreateSessionResponse created;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->CreateSession(&ctx, create, &created).ok());
  }
  const std::string sid = created.session().id();
  ASSERT_FALSE(sid.empty());

  {
    v1::GetProblemRequest req;
    req.set_session_id(sid);
    v1::GetProblemResponse resp;
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->GetProblem(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.problem().name(), "gather_linear_fp32");
    EXPECT_THAT(resp.contract(), HasSubstr("// @kb launch"));
  }
  const std::string naive =
      testing::ReadSourceFile("kernels/examples/gather_linear_naive.cu");
  ASSERT_TRUE(Compile(sid, naive).ok());
  ASSERT_TRUE(Compile(sid, absl::StrReplaceAll(
                               naive, {{"block(256)", "block(128)"},
                                       {"cdiv(K, 256)", "cdiv(K, 128)"}}))
                  .ok());
  const v1::GetSessionResponse session = GetSession(sid, 3);
  ASSERT_EQ(session.turns_size(), 3);
  EXPECT_EQ(session.turns(0).tool(), "get_problem");
  EXPECT_EQ(session.turns(1).tool(), "compile_kernel");
  EXPECT_EQ(session.turns(2).seq(), 3);
  EXPECT_FALSE(session.turns(2).job_id().empty());

  v1::CompareRunsRequest cmp;
  cmp.set_session_id(sid);
  cmp.set_turn_a(2);
  cmp.set_turn_b(3);
  v1::CompareRunsResponse compared;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->CompareRuns(&ctx, cmp, &compared).ok());
  }
  EXPECT_THAT(compared.source_diff(), HasSubstr("-// @kb launch gather_linear "
                                                "grid(B, cdiv(K, 256)) "
                                                "block(256)"));
  EXPECT_THAT(compared.source_diff(), HasSubstr("block(128)"));
  EXPECT_EQ(compared.a().verdict(), v1::VERDICT_PASSED);
  EXPECT_EQ(compared.lines_added(), 1);

  // Comparing with a turn that ran no kernel is refused with the reason,
  // and the refusal is a turn too (5, after the comparison's 4).
  cmp.set_turn_a(1);
  {
    grpc::ClientContext ctx;
    const grpc::Status s = stub_->CompareRuns(&ctx, cmp, &compared);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_THAT(s.error_message(), HasSubstr("get_problem"));
  }
  const v1::GetSessionResponse after = GetSession(sid, 5);
  ASSERT_EQ(after.turns_size(), 5);
  EXPECT_EQ(after.turns(4).tool(), "compare_runs");
  EXPECT_EQ(after.turns(4).verdict(), v1::VERDICT_REJECTED);
  EXPECT_EQ(after.session().last_tool(), "compare_runs");

  v1::ListSessionsResponse listed;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(
        stub_->ListSessions(&ctx, v1::ListSessionsRequest(), &listed).ok());
  }
  ASSERT_GE(listed.sessions_size(), 1);
  EXPECT_EQ(listed.sessions(0).id(), sid);

  v1::CloseSessionRequest close;
  close.set_session_id(sid);
  v1::CloseSessionResponse closed;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub_->CloseSession(&ctx, close, &closed).ok());
  }
  EXPECT_EQ(closed.session().status(), "closed");

  // Unknown ids are NOT_FOUND.
  v1::GetSessionRequest missing;
  missing.set_session_id("s-missing");
  v1::GetSessionResponse none;
  grpc::ClientContext ctx;
  EXPECT_EQ(stub_->GetSession(&ctx, missing, &none).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

}  // namespace
}  // namespace kbench
