// Kbd in-process: starts on free ports with its own data directory, serves
// gRPC and HTTP over one core, refuses bad options and a taken port with a
// message, stops cleanly, and keeps sessions across a restart on the same
// data directory. No GPU needed: the calls are compile_kernel and sessions.
#include "server/kbd.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "httplib.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

Kbd::Options TestOptions(const std::string& data_dir) {
  Kbd::Options o;
  o.listen = "127.0.0.1:0";
  o.http_listen = "127.0.0.1:0";
  o.data_dir = data_dir;
  o.compile_threads = 2;
  o.retention_days = 0;
  return o;
}

std::unique_ptr<v1::Kbench::Stub> Stub(const Kbd& kbd) {
  return v1::Kbench::NewStub(
      grpc::CreateChannel(kbd.address(), grpc::InsecureChannelCredentials()));
}

grpc::Status Compile(v1::Kbench::Stub* stub, const std::string& session,
                     v1::CompileKernelResponse* out) {
  v1::CompileKernelRequest req;
  req.mutable_kernel()->set_source(
      testing::ReadSourceFile("kernels/examples/gather_linear_naive.cu"));
  req.mutable_kernel()->set_session_id(session);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  return stub->CompileKernel(&ctx, req, out);
}

TEST(KbdTest, ServesGrpcAndHttpThenStops) {
  testing::TempDir dir;
  Kbd kbd(TestOptions(dir.path()));
  ASSERT_TRUE(kbd.Start().ok());
  ASSERT_GT(kbd.grpc_port(), 0);
  ASSERT_GT(kbd.http_port(), 0);
  EXPECT_EQ(kbd.worker_token_file(), dir.path() + "/worker.token");

  auto stub = Stub(kbd);
  v1::CompileKernelResponse compiled;
  const grpc::Status s = Compile(stub.get(), "s-kbd", &compiled);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(compiled.job_id().empty());
  EXPECT_TRUE(compiled.compile().success());

  // The same core over HTTP: the session the gRPC call made, with its
  // summary, and health.
  httplib::Client http("127.0.0.1", kbd.http_port());
  auto health = http.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200) << health->body;
  auto sessions = http.Get("/api/sessions");
  ASSERT_TRUE(sessions);
  EXPECT_EQ(sessions->status, 200);
  EXPECT_THAT(sessions->body, HasSubstr("\"id\":\"s-kbd\""));
  EXPECT_THAT(sessions->body, HasSubstr("\"last_tool\":\"compile_kernel\""));

  kbd.Stop();
  kbd.Stop();  // Idempotent.
  httplib::Client after("127.0.0.1", kbd.http_port());
  after.set_connection_timeout(1);
  EXPECT_FALSE(after.Get("/healthz"));
}

TEST(KbdTest, SessionsSurviveARestartOnTheSameDataDirectory) {
  testing::TempDir dir;
  {
    Kbd kbd(TestOptions(dir.path()));
    ASSERT_TRUE(kbd.Start().ok());
    auto stub = Stub(kbd);
    v1::CompileKernelResponse compiled;
    ASSERT_TRUE(Compile(stub.get(), "s-keep", &compiled).ok());
  }  // The destructor stops it.
  Kbd again(TestOptions(dir.path()));
  ASSERT_TRUE(again.Start().ok());
  auto stub = Stub(again);
  v1::GetSessionRequest req;
  req.set_session_id("s-keep");
  v1::GetSessionResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub->GetSession(&ctx, req, &resp).ok());
  ASSERT_EQ(resp.turns_size(), 1);
  EXPECT_EQ(resp.session().last_tool(), "compile_kernel");
  EXPECT_EQ(resp.session().last_verdict(), v1::VERDICT_PASSED);
}

TEST(KbdTest, BadOptionsAreRefusedWithWhatToFix) {
  testing::TempDir dir;
  {
    Kbd::Options o = TestOptions(dir.path());
    o.compile_sandbox = false;
    Kbd kbd(o);
    const absl::Status s = kbd.Start();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("--trust-host-compiles"));
  }
  {
    Kbd::Options o = TestOptions(dir.path());
    o.problems_dir = dir.path() + "/no-such-dir";
    Kbd kbd(o);
    const absl::Status s = kbd.Start();
    EXPECT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("loading problems"));
  }
  {
    Kbd::Options o = TestOptions(dir.path());
    o.local_worker = "lots";
    Kbd kbd(o);
    EXPECT_FALSE(kbd.Start().ok());
  }
  {
    Kbd::Options o = TestOptions(dir.path());
    o.worker_token_file = dir.path() + "/missing.token";
    Kbd kbd(o);
    const absl::Status s = kbd.Start();
    EXPECT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("worker token"));
  }
}

TEST(KbdTest, ATakenHttpPortStopsStartWithNothingLeftRunning) {
  testing::TempDir dir;
  Kbd first(TestOptions(dir.path() + "/a"));
  ASSERT_TRUE(first.Start().ok());
  Kbd::Options o = TestOptions(dir.path() + "/b");
  o.http_listen = "127.0.0.1:" + std::to_string(first.http_port());
  Kbd second(o);
  const absl::Status s = second.Start();
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("--http-listen"));
  EXPECT_EQ(second.grpc_port(), 0);
  // The first one still serves.
  auto stub = Stub(first);
  v1::CompileKernelResponse compiled;
  EXPECT_TRUE(Compile(stub.get(), "", &compiled).ok());
}

}  // namespace
}  // namespace kbench
