// absl::Status <-> grpc::Status <-> kbench.v1.Error keep code and message.
#include "base/grpc/grpc_status.h"

#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

// ---- Status conversions

TEST(GrpcStatusTest, EveryCodeAndMessageRoundTrips) {
  for (int code = 1; code <= 16; ++code) {
    const absl::Status in(static_cast<absl::StatusCode>(code),
                          "message for code " + std::to_string(code));
    const grpc::Status g = ToGrpcStatus(in);
    EXPECT_EQ(static_cast<int>(g.error_code()), code);
    EXPECT_EQ(g.error_message(), "message for code " + std::to_string(code));
    EXPECT_EQ(FromGrpcStatus(g), in);

    const v1::Error e = ToErrorProto(in);
    EXPECT_EQ(e.code(), code);
    EXPECT_EQ(e.message(), in.message());
    EXPECT_EQ(FromErrorProto(e), in);
  }
}

TEST(GrpcStatusTest, KnownCodeValues) {
  EXPECT_EQ(ToGrpcStatus(absl::NotFoundError("x")).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(ToGrpcStatus(absl::UnavailableError("x")).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(ToErrorProto(absl::UnavailableError("x")).code(), 14);
  EXPECT_EQ(ToErrorProto(absl::InvalidArgumentError("x")).code(), 3);
  EXPECT_EQ(
      FromGrpcStatus(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "late"))
          .code(),
      absl::StatusCode::kDeadlineExceeded);
}

TEST(GrpcStatusTest, OkMapsToOk) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK).ok());
  const v1::Error e = ToErrorProto(absl::OkStatus());
  EXPECT_EQ(e.code(), 0);
  EXPECT_EQ(e.message(), "");
  v1::Error with_text;
  with_text.set_code(0);
  with_text.set_message("ignored");
  EXPECT_TRUE(FromErrorProto(with_text).ok());
  EXPECT_TRUE(FromErrorProto(v1::Error()).ok());
}

TEST(GrpcStatusTest, ErrorProtoToStatus) {
  v1::Error e;
  e.set_code(14);
  e.set_message("no GPU worker connected");
  const absl::Status s = FromErrorProto(e);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "no GPU worker connected");
}

}  // namespace
}  // namespace kbench
