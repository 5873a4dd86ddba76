// The one place where absl::Status, grpc::Status and the kbench.v1.Error
// message are converted into each other. Codes keep their canonical values
// (absl::StatusCode and grpc::StatusCode share the google.rpc.Code
// numbering); messages pass through unchanged.
//
// Thread safety: stateless.
#ifndef KBENCH_COMMON_GRPC_STATUS_H_
#define KBENCH_COMMON_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "kbench/v1/report.pb.h"

namespace kbench {

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

// OK when `error` has code 0.
absl::Status FromErrorProto(const v1::Error& error);
v1::Error ToErrorProto(const absl::Status& status);

}  // namespace kbench

#endif  // KBENCH_COMMON_GRPC_STATUS_H_
