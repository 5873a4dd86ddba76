#include "base/error_proto.h"

#include <string>

#include "base/untrusted_input.h"

namespace kbench {

absl::Status FromErrorProto(const v1::Error& error) {
  if (error.code() == 0) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(error.code()),
                      error.message());
}

v1::Error ToErrorProto(const absl::Status& status) {
  v1::Error error;
  error.set_code(static_cast<int>(status.code()));
  // A message may quote a client's bytes cut anywhere (an expression's
  // excerpt); an Error that is not UTF-8 could not be stored or sent.
  error.set_message(ScrubUtf8(status.message()));
  return error;
}

}  // namespace kbench
