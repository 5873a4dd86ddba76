// The one place where absl::Status and grpc::Status are converted into each
// other; the kbench.v1.Error half is base/error_proto.h (included here).
// Codes keep their canonical values (absl::StatusCode and grpc::StatusCode
// share the google.rpc.Code numbering); messages pass through unchanged.
//
// Thread safety: stateless.
#ifndef KBENCH_BASE_GRPC_GRPC_STATUS_H_
#define KBENCH_BASE_GRPC_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "base/error_proto.h"

namespace kbench {

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace kbench

#endif  // KBENCH_BASE_GRPC_GRPC_STATUS_H_
