// kbd serves the standard gRPC health and reflection services, so probes and
// grpcurl work against it.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <set>

#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "testing/process.h"

namespace kbench {
namespace {

TEST(KbdHealthTest, HealthIsServing) {
  auto kbd = testing::KbdProcess::Start({});
  ASSERT_TRUE(kbd.ok()) << kbd.status();
  auto channel = grpc::CreateChannel((*kbd)->address(),
                                     grpc::InsecureChannelCredentials());
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::health::v1::HealthCheckRequest req;
  grpc::health::v1::HealthCheckResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub->Check(&ctx, req, &resp).ok());
  EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::SERVING);
}

TEST(KbdHealthTest, ReflectionListsTheServices) {
  auto kbd = testing::KbdProcess::Start({});
  ASSERT_TRUE(kbd.ok()) << kbd.status();
  auto channel = grpc::CreateChannel((*kbd)->address(),
                                     grpc::InsecureChannelCredentials());
  auto stub = grpc::reflection::v1alpha::ServerReflection::NewStub(channel);
  grpc::ClientContext ctx;
  auto stream = stub->ServerReflectionInfo(&ctx);
  grpc::reflection::v1alpha::ServerReflectionRequest req;
  req.set_list_services("*");
  ASSERT_TRUE(stream->Write(req));
  stream->WritesDone();
  grpc::reflection::v1alpha::ServerReflectionResponse resp;
  ASSERT_TRUE(stream->Read(&resp));
  std::set<std::string> names;
  for (const auto& s : resp.list_services_response().service()) {
    names.insert(s.name());
  }
  EXPECT_TRUE(names.count("kbench.v1.Kbench"));
  EXPECT_TRUE(names.count("kbench.v1.WorkerService"));
  EXPECT_TRUE(names.count("grpc.health.v1.Health"));
  while (stream->Read(&resp)) {
  }
  EXPECT_TRUE(stream->Finish().ok());
}

}  // namespace
}  // namespace kbench
