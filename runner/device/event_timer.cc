#include "runner/device/event_timer.h"

#include "absl/strings/str_cat.h"
#include "runner/device/cuda_status.h"

namespace kbench {

absl::StatusOr<std::unique_ptr<EventTimer>> EventTimer::Create(int slots,
                                                               bool in_graphs) {
  std::unique_ptr<EventTimer> t(new EventTimer());
  t->record_flags_ =
      in_graphs ? cudaEventRecordExternal : cudaEventRecordDefault;
  for (int i = 0; i < slots; ++i) {
    cudaEvent_t a = nullptr, b = nullptr;
    CUDA_RETURN_IF_ERROR(cudaEventCreate(&a), "creating a timing event");
    t->start_.push_back(a);
    CUDA_RETURN_IF_ERROR(cudaEventCreate(&b), "creating a timing event");
    t->stop_.push_back(b);
  }
  return t;
}

EventTimer::~EventTimer() {
  for (cudaEvent_t e : start_) cudaEventDestroy(e);
  for (cudaEvent_t e : stop_) cudaEventDestroy(e);
}

absl::Status EventTimer::Record(cudaEvent_t event, cudaStream_t stream,
                                const char* what) {
  CUDA_RETURN_IF_ERROR(cudaEventRecordWithFlags(event, stream, record_flags_),
                       what);
  return absl::OkStatus();
}

absl::Status EventTimer::Start(int slot, cudaStream_t stream) {
  return Record(start_.at(slot), stream, "recording a start event");
}

absl::Status EventTimer::Stop(int slot, cudaStream_t stream) {
  return Record(stop_.at(slot), stream, "recording a stop event");
}

absl::StatusOr<double> EventTimer::ElapsedUs(int slot) const {
  float ms = 0;
  CUDA_RETURN_IF_ERROR(
      cudaEventElapsedTime(&ms, start_.at(slot), stop_.at(slot)),
      absl::StrCat("reading timing event pair ", slot));
  return 1000.0 * ms;
}

}  // namespace kbench
