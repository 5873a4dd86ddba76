#include "runner/timing/graph_replay.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runner/device/cuda_status.h"

namespace kbench {
namespace {

// Captures `runs` iterations of `body` on `s` into a graph and instantiates
// it. The capture is ended on every path, so that the stream is usable
// after a failure.
absl::Status CaptureGraph(cudaStream_t s, int runs,
                          const std::function<absl::Status()>& body,
                          cudaGraph_t* graph, cudaGraphExec_t* exec) {
  CUDA_RETURN_IF_ERROR(
      cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal),
      "beginning a CUDA graph capture");
  absl::Status enqueued = absl::OkStatus();
  for (int i = 0; i < runs && enqueued.ok(); ++i) enqueued = body();
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
  cudaStream_t s = ctx->stream();
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s), "before a graph capture");
  RETURN_IF_ERROR(CaptureGraph(
      s, g->runs_,
      [&]() -> absl::Status {
        if (flusher != nullptr) RETURN_IF_ERROR(flusher->Flush(s));
        return enqueue();
      },
      &g->graph_, &g->exec_));
  if (flusher != nullptr) {
    RETURN_IF_ERROR(CaptureGraph(
        s, g->runs_, [&] { return flusher->Flush(s); }, &g->flush_graph_,
        &g->flush_exec_));
  }
  ASSIGN_OR_RETURN(g->timer_, EventTimer::Create(1));
  return g;
}

GraphReplay::~GraphReplay() {
  if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  if (graph_ != nullptr) cudaGraphDestroy(graph_);
  if (flush_exec_ != nullptr) cudaGraphExecDestroy(flush_exec_);
  if (flush_graph_ != nullptr) cudaGraphDestroy(flush_graph_);
}

absl::StatusOr<double> GraphReplay::TimeOne(cudaGraphExec_t exec) {
  cudaStream_t s = ctx_->stream();
  RETURN_IF_ERROR(timer_->Start(0, s));
  CUDA_RETURN_IF_ERROR(cudaGraphLaunch(exec, s), "replaying a CUDA graph");
  RETURN_IF_ERROR(timer_->Stop(0, s));
  const cudaError_t sync = cudaStreamSynchronize(s);
  if (sync != cudaSuccess) return CudaRtStatus(sync, "replaying a CUDA graph");
  return timer_->ElapsedUs(0);
}

absl::StatusOr<double> GraphReplay::ReplayUs() {
  ASSIGN_OR_RETURN(const double all_us, TimeOne(exec_));
  double flush_us = 0;
  if (flush_exec_ != nullptr) {
    ASSIGN_OR_RETURN(const double one, TimeOne(flush_exec_));
    flush_us_.push_back(one);
    std::vector<double> sorted = flush_us_;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2,
                     sorted.end());
    flush_us = sorted[sorted.size() / 2];
  }
  return std::max(0.0, all_us - flush_us) / runs_;
}

}  // namespace kbench
