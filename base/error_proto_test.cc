#include "base/error_proto.h"

#include <string>

#include "base/untrusted_input.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

TEST(ErrorProtoTest, RoundTripsCodeAndMessage) {
  const absl::Status s = absl::NotFoundError("no job 'j-1'");
  const v1::Error e = ToErrorProto(s);
  EXPECT_EQ(e.code(), static_cast<int>(absl::StatusCode::kNotFound));
  EXPECT_EQ(FromErrorProto(e), s);
  EXPECT_TRUE(FromErrorProto(ToErrorProto(absl::OkStatus())).ok());
}

// A message that quotes a client's bytes cut anywhere must still make an
// Error the store can keep and gRPC can send: proto3 strings are UTF-8.
TEST(ErrorProtoTest, AMessageThatIsNotUtf8IsScrubbed) {
  const v1::Error e =
      ToErrorProto(absl::InvalidArgumentError("unexpected 'R\xc3' here"));
  EXPECT_TRUE(IsValidUtf8(e.message()));
  EXPECT_EQ(e.message(), "unexpected 'R\xef\xbf\xbd' here");
}

}  // namespace
}  // namespace kbench
