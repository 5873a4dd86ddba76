#include "base/error_proto.h"

#include <string>

namespace kbench {

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
