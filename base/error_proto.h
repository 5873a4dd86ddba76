// absl::Status <-> the kbench.v1.Error message (what a job's result and a
// tool's reply carry). Codes keep their canonical google.rpc.Code values;
// messages pass through unchanged. The gRPC half of the mapping is
// base/grpc/grpc_status.h, kept apart so that code below the gRPC front end
// (the server core, the agent layer) never sees gRPC headers.
//
// Thread safety: stateless.
#ifndef KBENCH_BASE_ERROR_PROTO_H_
#define KBENCH_BASE_ERROR_PROTO_H_

#include "absl/status/status.h"
#include "kbench/v1/report.pb.h"

namespace kbench {

// OK when `error` has code 0.
absl::Status FromErrorProto(const v1::Error& error);
v1::Error ToErrorProto(const absl::Status& status);

}  // namespace kbench

#endif  // KBENCH_BASE_ERROR_PROTO_H_
