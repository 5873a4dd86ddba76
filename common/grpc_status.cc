#include "common/grpc_status.h"

#include <string>

namespace kbench {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

absl::Status FromErrorProto(const v1::Error& error) {
  if (error.code() == 0) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(error.code()),
                      error.message());
}

v1::Error ToErrorProto(const absl::Status& status) {
  v1::Error error;
  error.set_code(static_cast<int>(status.code()));
  error.set_message(std::string(status.message()));
  return error;
}

}  // namespace kbench
