#include "runner/reference/collective.h"

#include "absl/strings/str_cat.h"

namespace kbench {

absl::Status Collective::Register(int rank, const void* send, int64_t bytes) {
  if (rank < 0 || rank >= world_size() || send == nullptr || bytes < 0) {
    return absl::InternalError(
        absl::StrCat("an all-gather of ", world_size(), " ranks got rank ",
                     rank, "'s send buffer of ", bytes, " bytes",
                     send == nullptr ? " at a null pointer" : ""));
  }
  sends_[rank] = {send, bytes};
  return absl::OkStatus();
}

absl::StatusOr<const void*> Collective::SendOf(int rank,
                                               int64_t recv_bytes) const {
  const int world = world_size();
  if (rank < 0 || rank >= world) {
    return absl::InternalError(
        absl::StrCat("an all-gather of ", world, " ranks run at rank ", rank));
  }
  const int64_t bytes = sends_[0].bytes;
  for (int r = 0; r < world; ++r) {
    if (sends_[r].ptr == nullptr || sends_[r].bytes != bytes) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the all-gather's rank ", r,
          sends_[r].ptr == nullptr ? " has no send buffer yet"
                                   : absl::StrCat(" sends ", sends_[r].bytes,
                                                  " bytes, rank 0 ", bytes)));
    }
  }
  if (recv_bytes < bytes * world) {
    return absl::FailedPreconditionError(
        absl::StrCat("the all-gather's receive buffer holds ", recv_bytes,
                     " bytes, not ", world, " shards of ", bytes));
  }
  return sends_[rank].ptr;
}

}  // namespace kbench
