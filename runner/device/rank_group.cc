#include "runner/device/rank_group.h"

#include <cuda_runtime_api.h>

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "contract/problem_util.h"
#include "runner/device/cuda_status.h"

namespace kbench {
namespace {

// Lets `from` read and write `to`'s memory. Already enabled is fine: the
// primary contexts outlive any one job.
absl::Status EnablePeer(int from, int to) {
  int can = 0;
  CUDA_RETURN_IF_ERROR(cudaDeviceCanAccessPeer(&can, from, to),
                       "asking for peer access");
  if (can == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "GPU ", from, " cannot access GPU ", to,
        "'s memory (no peer-to-peer between them); a job that spans GPUs "
        "needs GPUs that reach each other, which kbd picks from the "
        "workers' topology reports"));
  }
  CUDA_RETURN_IF_ERROR(cudaSetDevice(from), "selecting a rank's device");
  const cudaError_t err = cudaDeviceEnablePeerAccess(to, 0);
  if (err == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();  // Not sticky; clear it for the next check.
    return absl::OkStatus();
  }
  return CudaRtStatus(err, absl::StrCat("enabling peer access from GPU ", from,
                                        " to GPU ", to));
}

}  // namespace

absl::StatusOr<std::unique_ptr<RankGroup>> RankGroup::Create(
    DeviceContext* rank0, const Options& options) {
  const int world = static_cast<int>(options.devices.size());
  if (world < 1 || world > kMaxWorldSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("a job spans 1 to ", kMaxWorldSize, " GPUs, not ", world));
  }
  if (options.devices[0] != rank0->device()) {
    return absl::InternalError(
        absl::StrCat("rank 0 must run on the runner's own device ",
                     rank0->device(), ", not ", options.devices[0]));
  }
  int count = 0;
  CUDA_RETURN_IF_ERROR(cudaGetDeviceCount(&count), "counting the GPUs");
  for (int r = 0; r < world; ++r) {
    const int d = options.devices[r];
    if (d < 0 || d >= count) {
      return absl::FailedPreconditionError(
          absl::StrCat("the job spans ", world, " GPUs, but rank ", r,
                       "'s device ", d, " is not among the ", count,
                       " this runner sees (kbworker lists the gang's GPUs in "
                       "CUDA_VISIBLE_DEVICES)"));
    }
  }
  std::unique_ptr<RankGroup> g(new RankGroup());
  g->devices_ = options.devices;
  g->ctxs_.push_back(rank0);
  // From here on the destructor restores rank 0's device.
  for (int r = 1; r < world; ++r) {
    DeviceContext::Options o;
    o.device = options.devices[r];
    o.blas = true;  // Every rank runs its part of the baseline.
    ASSIGN_OR_RETURN(std::unique_ptr<DeviceContext> ctx,
                     DeviceContext::Create(o));
    g->ctxs_.push_back(ctx.get());
    g->owned_.push_back(std::move(ctx));
  }
  const std::set<int> distinct(options.devices.begin(), options.devices.end());
  for (int from : distinct) {
    for (int to : distinct) {
      if (from != to) RETURN_IF_ERROR(EnablePeer(from, to));
    }
  }
  RETURN_IF_ERROR(g->Select(0));
  return g;
}

RankGroup::~RankGroup() {
  for (std::unique_ptr<DeviceContext>& ctx : owned_) {
    // Its stream is destroyed with its own device selected.
    (void)cudaSetDevice(ctx->device());
    ctx.reset();
  }
  if (!devices_.empty()) (void)cudaSetDevice(devices_[0]);
}

absl::Status RankGroup::Select(int rank) const {
  CUDA_RETURN_IF_ERROR(cudaSetDevice(devices_[rank]),
                       absl::StrCat("selecting rank ", rank, "'s GPU"));
  return absl::OkStatus();
}

}  // namespace kbench
