// GraphReplay: the steady-state time of one workload per run, from
// replaying a CUDA graph of `runs` whole runs back to back, as a serving
// stack replays a captured step: no host launch cost, one event pair per
// replay rather than per run. With an L2 flusher every run in the graph
// follows a flush, and a second graph of the flushes alone is replayed
// beside it and subtracted, so that the figure is a run from a cold L2.
//
//   auto g = GraphReplay::Capture(ctx, [&] { return bound->Enqueue(); },
//                                 flusher, {});
//   for (...) samples.push_back(*(*g)->ReplayUs());
//
// Ownership: owns its graphs and events; borrows the context, which must
// outlive it. Thread safety: none (runner thread).
#ifndef KBENCH_RUNNER_TIMING_GRAPH_REPLAY_H_
#define KBENCH_RUNNER_TIMING_GRAPH_REPLAY_H_

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runner/device/device_context.h"
#include "runner/device/event_timer.h"
#include "runner/device/l2_flusher.h"

namespace kbench {

class GraphReplay {
 public:
  struct Options {
    // Runs of the workload captured in one graph (>= 1).
    int runs = 20;
  };

  // Captures `enqueue` (one run, enqueued on the context's stream, no sync)
  // `options.runs` times, each after a flush when `flusher` is not null,
  // and instantiates the graph(s). FailedPrecondition, saying why, when the
  // workload cannot be captured (it synchronizes, or uses a legacy stream).
  static absl::StatusOr<std::unique_ptr<GraphReplay>> Capture(
      DeviceContext* ctx, const std::function<absl::Status()>& enqueue,
      L2Flusher* flusher, const Options& options);
  ~GraphReplay();
  GraphReplay(const GraphReplay&) = delete;
  GraphReplay& operator=(const GraphReplay&) = delete;

  // Replays the graph once and returns the time per run in us: (replay -
  // flush replay) / runs, where the flush replay is the median of the
  // flush graph's replays so far (one more is timed now), so that its noise
  // is not paid in full by every sample. Synchronizes the stream.
  absl::StatusOr<double> ReplayUs();

 private:
  explicit GraphReplay(DeviceContext* ctx) : ctx_(ctx) {}
  // Times one replay of `exec` in us.
  absl::StatusOr<double> TimeOne(cudaGraphExec_t exec);

  DeviceContext* ctx_;
  int runs_ = 0;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  cudaGraph_t flush_graph_ = nullptr;  // Null without a flusher.
  cudaGraphExec_t flush_exec_ = nullptr;
  std::unique_ptr<EventTimer> timer_;
  std::vector<double> flush_us_;  // Every flush replay timed, in us.
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_TIMING_GRAPH_REPLAY_H_
