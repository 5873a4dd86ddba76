#include "runner/timing/graph_replay.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runner/device/cuda_status.h"

namespace kbench {
namespace {

// Captures `runs` iterations of `body(i)` on `s` into a graph and
// instantiates it. The capture is ended on every path, so that the stream
// is usable after a failure.
absl::Status CaptureGraph(cudaStream_t s, int runs,
                          const std::function<absl::Status(int)>& body,
                          cudaGraph_t* graph, cudaGraphExec_t* exec) {
  CUDA_RETURN_IF_ERROR(
      cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal),
      "beginning a CUDA graph capture");
  absl::Status enqueued = absl::OkStatus();
  for (int i = 0; i < runs && enqueued.ok(); ++i) enqueued = body(i);
  const cudaError_t ended = cudaStreamEndCapture(s, graph);
  if (!enqueued.ok() || ended != cudaSuccess || *graph == nullptr) {
    cudaGetLastError();  // A failed capture is not the kernel's error.
    if (*graph != nullptr) cudaGraphDestroy(*graph);
    *graph = nullptr;
    return absl::FailedPreconditionError(
        absl::StrCat("the run cannot be captured in a CUDA graph (",
                     !enqueued.ok() ? std::string(enqueued.message())
                                    : std::string(cudaGetErrorString(ended)),
                     ")"));
  }
  const cudaError_t made = cudaGraphInstantiate(exec, *graph, 0);
  if (made != cudaSuccess) {
    cudaGetLastError();
    return absl::FailedPreconditionError(absl::StrCat(
        "instantiating the CUDA graph: ", cudaGetErrorString(made)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<GraphReplay>> GraphReplay::Capture(
    DeviceContext* ctx, const std::function<absl::Status()>& enqueue,
    L2Flusher* flusher, const Options& options) {
  std::unique_ptr<GraphReplay> g(new GraphReplay(ctx));
  g->runs_ = std::max(1, options.runs);
  if (options.events) {
    ASSIGN_OR_RETURN(g->timer_,
                     EventTimer::Create(g->runs_, /*in_graphs=*/true));
  }
  cudaStream_t s = ctx->stream();
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s), "before a graph capture");
  EventTimer* timer = g->timer_.get();
  RETURN_IF_ERROR(CaptureGraph(
      s, g->runs_,
      [&](int i) -> absl::Status {
        if (flusher != nullptr) RETURN_IF_ERROR(flusher->Flush(s));
        if (timer != nullptr) RETURN_IF_ERROR(timer->Start(i, s));
        RETURN_IF_ERROR(enqueue());
        return timer != nullptr ? timer->Stop(i, s) : absl::OkStatus();
      },
      &g->graph_, &g->exec_));
  return g;
}

GraphReplay::~GraphReplay() {
  if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  if (graph_ != nullptr) cudaGraphDestroy(graph_);
}

absl::StatusOr<std::vector<double>> GraphReplay::Replay() {
  cudaStream_t s = ctx_->stream();
  CUDA_RETURN_IF_ERROR(cudaGraphLaunch(exec_, s), "replaying a CUDA graph");
  const cudaError_t sync = cudaStreamSynchronize(s);
  if (sync != cudaSuccess) return CudaRtStatus(sync, "replaying a CUDA graph");
  std::vector<double> us;
  if (timer_ == nullptr) return us;
  us.reserve(runs_);
  for (int i = 0; i < runs_; ++i) {
    ASSIGN_OR_RETURN(const double one, timer_->ElapsedUs(i));
    us.push_back(one);
  }
  return us;
}

}  // namespace kbench
