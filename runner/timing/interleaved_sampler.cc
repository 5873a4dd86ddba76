#include "runner/timing/interleaved_sampler.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "runner/device/cuda_status.h"
#include "runner/device/event_timer.h"

namespace kbench {

absl::StatusOr<InterleavedSampler::Result> InterleavedSampler::Run(
    const std::vector<Workload>& workloads) {
  const int nw = static_cast<int>(workloads.size());
  cudaStream_t s = ctx_->stream();
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - t0)
        .count();
  };

  Result result;
  const int warmup = std::max(1, options_.warmup);
  result.warmup_runs = warmup;
  for (int i = 0; i < warmup; ++i) {
    for (int w = 0; w < nw; ++w) {
      RETURN_IF_ERROR(workloads[w].enqueue());
      result.order.push_back(w);
    }
  }
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s), "warming up");
  // Size batches so that one batch takes at most a quarter of the budget:
  // slow kernels get batches of 1, fast ones the configured size.
  const int batch = BatchWithinLimit(options_.batch, elapsed_ms() / warmup,
                                     options_.stop.max_time_ms);

  ASSIGN_OR_RETURN(std::unique_ptr<EventTimer> timer,
                   EventTimer::Create(batch * nw));
  std::vector<StoppingCriterion> criteria(nw, StoppingCriterion(options_.stop));
  result.samples_us.resize(nw);
  int round = 0;
  auto all_done = [&] {
    const double ms = elapsed_ms();
    for (const StoppingCriterion& c : criteria) {
      if (!c.Done(ms)) return false;
    }
    return true;
  };
  while (!all_done()) {
    RETURN_IF_ERROR(blocker_->Block(s));
    absl::Status queued = absl::OkStatus();
    for (int j = 0; j < batch && queued.ok(); ++j, ++round) {
      for (int k = 0; k < nw && queued.ok(); ++k) {
        const int w = (k + round) % nw;  // Alternate who goes first.
        const int slot = j * nw + w;
        if (options_.flush_l2) queued = flusher_->Flush(s);
        if (queued.ok()) queued = timer->Start(slot, s);
        if (queued.ok()) queued = workloads[w].enqueue();
        if (queued.ok()) result.order.push_back(w);
        if (queued.ok()) queued = timer->Stop(slot, s);
      }
    }
    blocker_->Release();
    const cudaError_t sync = cudaStreamSynchronize(s);
    RETURN_IF_ERROR(queued);
    if (sync != cudaSuccess) {
      return CudaRtStatus(sync, "running timed samples");
    }
    if (blocker_->TimedOut()) {
      ++result.discarded_batches;
      // The time limit stops sampling only once every workload has a
      // sample; if every batch is discarded, none ever does.
      const double ms = elapsed_ms();
      const bool empty = std::any_of(
          criteria.begin(), criteria.end(),
          [](const StoppingCriterion& c) { return c.count() == 0; });
      if (empty && ms >= options_.stop.max_time_ms) {
        return absl::UnavailableError(absl::StrFormat(
            "timing got no samples in %.0f ms: the stream blocker timed out "
            "in all %d batches, so the timed launches reached the GPU too "
            "slowly to queue behind it (a CUDA tool serialising launches?)",
            ms, result.discarded_batches));
      }
      continue;
    }
    for (int slot = 0; slot < batch * nw; ++slot) {
      ASSIGN_OR_RETURN(const double us, timer->ElapsedUs(slot));
      result.samples_us[slot % nw].push_back(us);
      criteria[slot % nw].Add(us);
    }
  }
  result.wall_ms = elapsed_ms();
  std::vector<std::string> reasons;
  reasons.reserve(nw);
  for (int w = 0; w < nw; ++w) {
    reasons.push_back(absl::StrCat(workloads[w].name, ": ",
                                   criteria[w].Reason(result.wall_ms)));
  }
  result.stop_reason = absl::StrJoin(reasons, "; ");
  return result;
}

}  // namespace kbench
