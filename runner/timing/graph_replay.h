// GraphReplay: a CUDA graph of `runs` whole runs of one workload, replayed
// back to back as a serving stack replays a captured step: no host launch
// cost between runs or between a run's kernels. With an L2 flusher every
// run follows a flush. The steady-state time of each run is read from
// CUPTI's records of its kernels (PlanTimer does so); where CUPTI is not
// available, each run can sit between two event-record nodes of the graph
// (`Options::events`) and one replay gives `runs` event times. The event
// nodes cost about 2 us per run on the H200 (a 13.7 us kernel read 16.0 us
// between them), which is why they are only the fallback. (An earlier
// version timed a graph of flushes alone and subtracted it from the whole
// replay: the noise of ~60 us of flushes per run moved a 9 us run by
// 5-7 % between submits.)
//
//   auto g = GraphReplay::Capture(ctx, [&] { return bound->Enqueue(); },
//                                 flusher, {});
//   for (...) ASSIGN_OR_RETURN(std::vector<double> us, (*g)->Replay());
//
// Ownership: owns its graph and events; borrows the context, which must
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
    // Each run between two event-record nodes, so Replay returns its time.
    bool events = true;
  };

  // Captures `enqueue` (one run, enqueued on the context's stream, no sync)
  // `options.runs` times, each after a flush when `flusher` is not null (and
  // between two event-record nodes with `options.events`), and instantiates
  // the graph.
  // FailedPrecondition, saying why, when the workload cannot be captured
  // (it synchronizes, or uses a legacy stream).
  static absl::StatusOr<std::unique_ptr<GraphReplay>> Capture(
      DeviceContext* ctx, const std::function<absl::Status()>& enqueue,
      L2Flusher* flusher, const Options& options);
  ~GraphReplay();
  GraphReplay(const GraphReplay&) = delete;
  GraphReplay& operator=(const GraphReplay&) = delete;

  // Replays the graph once and returns each run's time in us, in order
  // (empty without `options.events`). Synchronizes the stream.
  absl::StatusOr<std::vector<double>> Replay();
  int runs() const { return runs_; }

 private:
  explicit GraphReplay(DeviceContext* ctx) : ctx_(ctx) {}

  DeviceContext* ctx_;
  int runs_ = 0;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  // One slot per run, external records; null without Options::events.
  std::unique_ptr<EventTimer> timer_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_TIMING_GRAPH_REPLAY_H_
