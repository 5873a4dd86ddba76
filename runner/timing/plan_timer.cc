#include "runner/timing/plan_timer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "contract/problem_util.h"
#include "runner/device/cuda_status.h"
#include "runner/host/run_checks.h"
#include "runner/host/sample_stats.h"
#include "runner/host/stopping_criterion.h"
#include "runner/profile/kernel_activity.h"
#include "runner/timing/graph_replay.h"
#include "runner/timing/interleaved_sampler.h"
#include "spdlog/spdlog.h"

namespace kbench {

absl::StatusOr<std::unique_ptr<PlanTimer>> PlanTimer::Create(
    DeviceContext* ctx, L2Flusher* flusher, StreamBlocker* blocker) {
  std::unique_ptr<PlanTimer> t(new PlanTimer(ctx, flusher, blocker));
  ASSIGN_OR_RETURN(t->clock_, ClockProbe::Create(ctx));
  return t;
}

namespace {

// A graph replay of about this long (us) at most, flushes included.
constexpr double kGraphReplayUs = 2000;
// Replays of each graph: untimed, then timed; fewer when a replay is long
// (a slow kernel's two runs already take more than this many us).
constexpr int kGraphWarmup = 2;
constexpr int kGraphReplays = 7;
constexpr double kLongReplayUs = 10000;

// Tells a candidate's CUPTI kernel records from its reference's, by name:
// the candidate's are its plan's entry points, the reference's all others
// but the harness's (the timer refuses a candidate named like a baseline
// kernel). Holds the names; the filters refer to it.
class RecordSplit {
 public:
  explicit RecordSplit(const ConcretePlan& plan) {
    for (const ConcreteLaunch& l : plan.launches) entries_.insert(l.entry);
  }
  std::function<bool(const std::string&)> Kernel() const {
    return [this](const std::string& n) { return entries_.count(n) > 0; };
  }
  std::function<bool(const std::string&)> Reference() const {
    return [this](const std::string& n) {
      return entries_.count(n) == 0 && !IsHarnessKernel(n);
    };
  }

 private:
  std::set<std::string> entries_;
};

// Workload names in notes: the kernel, the reference, the expert baseline.
constexpr const char* kSides[] = {"kernel", "reference", "expert"};

// The run spans in `records` of each workload of `order` (0: kernel, 1:
// reference, 2: the expert baseline when it is timed), warm-up runs first,
// `eager_kernels` the kernels per run of the workloads after the kernel:
// by position (ScheduledSpansUs), else, where the records do not add up,
// by name (RecordSplit): the kernel always, the reference only when no
// expert baseline ran (the two baselines' names may be alike). A workload
// that neither finds gets an empty vector and a note naming `basis` ("GPU
// time", "graph time") and the reasons.
std::vector<std::vector<double>> SplitSpans(
    const std::vector<KernelActivity::Record>& records,
    const std::vector<int>& order, const ConcretePlan& plan,
    const std::vector<int>& eager_kernels, int skip_runs, bool from_submitted,
    absl::string_view basis, v1::TimingReport* timing) {
  const int launches = static_cast<int>(plan.launches.size());
  std::vector<int> per_run = {launches};
  per_run.insert(per_run.end(), eager_kernels.begin(), eager_kernels.end());
  std::string by_position;
  std::vector<std::vector<double>> spans = ScheduledSpansUs(
      records, order, per_run, skip_runs, from_submitted, &by_position);
  if (std::none_of(spans.begin(), spans.end(),
                   [](const std::vector<double>& v) { return v.empty(); })) {
    return spans;
  }
  spdlog::info("{} by position: {}; trying by name", std::string(basis),
               by_position);
  const RecordSplit split(plan);
  const std::function<bool(const std::string&)> keep[] = {split.Kernel(),
                                                          split.Reference()};
  // With an expert baseline too, only the kernel's names are its own (a
  // candidate named like a baseline's kernel is refused); the two
  // baselines' may be alike.
  for (size_t w = 2; w < spans.size(); ++w) {
    AddGpuTimeNote(timing, absl::StrCat("no ", kSides[w], " ", basis,
                                        ": by position, ", by_position));
  }
  const int by_name = per_run.size() == 2 ? 2 : 1;
  if (by_name == 1) {
    AddGpuTimeNote(timing, absl::StrCat("no reference ", basis,
                                        ": by position, ", by_position));
  }
  for (int w = 0; w < by_name; ++w) {
    spans[w] =
        RunSpansUs(records, keep[w], per_run[w], skip_runs, from_submitted);
    if (spans[w].empty()) {
      AddGpuTimeNote(
          timing,
          absl::StrCat("no ", kSides[w], " ", basis, ": by position, ",
                       by_position, "; by name, ",
                       NoRunsReason(records, keep[w], per_run[w], skip_runs)));
    }
  }
  return spans;
}

// Logs where each workload's runs spent their GPU time: per part (front
// end, each kernel, each gap between kernels) the median and the 10th and
// 90th percentiles over the counted runs. For triage of a time that moves
// between submits (the reference at the default shape on an H100 did by
// up to 7 %, 2026-12-06): it says which part moved.
void LogRunParts(const std::vector<KernelActivity::Record>& records,
                 const std::vector<int>& order, const std::vector<int>& per_run,
                 int skip_runs) {
  auto pct = [](std::vector<double> v, double q) {
    const size_t i = static_cast<size_t>(std::lround(q * (v.size() - 1)));
    std::nth_element(v.begin(), v.begin() + i, v.end());
    return v[i];
  };
  for (size_t w = 0; w < per_run.size() && w < std::size(kSides); ++w) {
    const std::vector<RunPart> parts = ScheduledPartsUs(
        records, order, per_run, skip_runs, static_cast<int>(w));
    if (parts.empty() || parts[0].us.empty()) continue;
    std::vector<std::string> text;
    text.reserve(parts.size());
    for (const RunPart& p : parts) {
      text.push_back(absl::StrFormat("%s %.3f [%.3f..%.3f]",
                                     p.name.substr(0, 48), pct(p.us, 0.5),
                                     pct(p.us, 0.1), pct(p.us, 0.9)));
    }
    spdlog::info("{} GPU time by part over {} runs, median [p10..p90] us: {}",
                 kSides[w], parts[0].us.size(), absl::StrJoin(text, ", "));
  }
}

}  // namespace

absl::Status PlanTimer::TimeGraphs(BoundPlan* bound, ReferenceOp* reference,
                                   bool cold, v1::TimingReport* timing) {
  EagerPipeline* expert = reference->Expert();
  // Runs per graph: a replay of at most ~2 ms, flushes included, so a
  // short workload gets hundreds of runs in all.
  const double run_us =
      std::max({timing->kernel().median_us(), timing->reference().median_us(),
                timing->expert().median_us()}) +
      // A flush reads its buffer kKernels times, at about 3 TB/s.
      (cold ? L2Flusher::kKernels * static_cast<double>(flusher_->bytes()) / 3e6
            : 0);
  // Each run's time comes from CUPTI's records of its kernels (no event
  // nodes in the graph: they cost ~2 us a run); with CUPTI unavailable,
  // from event-record nodes around each run.
  KernelActivity activity;
  const bool cupti = activity.Start().ok();
  if (activity.tool_attached()) {
    // Under a profiler every kernel node of every replay would be profiled
    // on its own (9 replays of graphs of up to 100 runs, at about 0.5 s a
    // kernel under ncu), and a replay timed under a profiler says nothing
    // about the steady state.
    AddGpuTimeNote(timing,
                   "no graph time: a CUDA tool (a profiler) holds CUPTI, "
                   "and it would profile each replay's kernels one by one");
    return absl::OkStatus();
  }
  GraphReplay::Options go;
  go.runs = static_cast<int>(
      std::clamp(kGraphReplayUs / std::max(run_us, 1.0), 2.0, 100.0));
  go.events = !cupti;
  L2Flusher* flush = cold ? flusher_ : nullptr;
  // One graph per workload: kernel, reference, then the expert baseline.
  std::vector<std::function<absl::Status()>> runs = {
      [&] { return bound->Enqueue(); },
      [&] { return reference->Eager()->Run(); }};
  if (expert != nullptr) runs.push_back([&] { return expert->Run(); });
  std::vector<std::unique_ptr<GraphReplay>> graphs;
  for (size_t w = 0; w < runs.size(); ++w) {
    absl::StatusOr<std::unique_ptr<GraphReplay>> g =
        GraphReplay::Capture(ctx_, runs[w], flush, go);
    if (!g.ok()) {
      const std::string why(g.status().message());
      spdlog::info("no {} graph timing: {}", kSides[w], why);
      AddGpuTimeNote(timing,
                     absl::StrCat("no ", kSides[w], " graph time: ", why));
      // Without the expert's graph, kernel and reference are still timed.
      if (w < 2) return absl::OkStatus();
      continue;
    }
    graphs.push_back(*std::move(g));
  }
  const int n = static_cast<int>(graphs.size());
  const bool long_replay = go.runs * run_us > kLongReplayUs;
  const int warmup = long_replay ? 1 : kGraphWarmup;
  const int replays = long_replay ? 3 : kGraphReplays;
  std::vector<std::vector<double>> us(n);
  // The workload index of every run, in the order the replays ran them.
  std::vector<int> order;
  for (int i = 0; i < warmup + replays; ++i) {
    // Rotate who goes first, as the event samples alternate.
    for (int j = 0; j < n; ++j) {
      const int w = (i + j) % n;
      ASSIGN_OR_RETURN(const std::vector<double> got, graphs[w]->Replay());
      order.insert(order.end(), go.runs, w);
      if (i >= warmup) us[w].insert(us[w].end(), got.begin(), got.end());
    }
  }
  if (cupti) {
    absl::StatusOr<std::vector<KernelActivity::Record>> records =
        activity.Stop();
    if (!records.ok()) {
      spdlog::info("no graph timing: {}",
                   std::string(records.status().message()));
      AddGpuTimeNote(
          timing, absl::StrCat("no graph time: ", records.status().message()));
      return absl::OkStatus();
    }
    if (activity.dropped() > 0) {
      // Runs cut from a record stream with holes could straddle two runs.
      AddGpuTimeNote(timing, absl::StrCat("no graph time: CUPTI dropped ",
                                          activity.dropped(), " records"));
      return absl::OkStatus();
    }
    std::vector<int> eager = {reference->Eager()->Kernels()};
    if (n > 2) eager.push_back(expert->Kernels());
    us = SplitSpans(*records, order, bound->plan(), eager, warmup * go.runs,
                    /*from_submitted=*/false, "graph time", timing);
  }
  if (us[0].empty() || us[1].empty()) {
    spdlog::info(
        "no graph timing: the replays' kernels did not split into "
        "runs");
    if (!cupti) {
      AddGpuTimeNote(timing, "no graph time: the replays gave no samples");
    }
    return absl::OkStatus();
  }
  *timing->mutable_kernel_graph() = ComputeStats(us[0]);
  *timing->mutable_reference_graph() = ComputeStats(us[1]);
  if (n > 2 && !us[2].empty()) {
    *timing->mutable_expert_graph() = ComputeStats(us[2]);
  }
  timing->set_graph_runs(go.runs);
  return absl::OkStatus();
}

absl::Status PlanTimer::Run(const Params& params, v1::TimingReport* timing,
                            std::string* wrong_output) {
  const v1::RunnerJob& job = *params.job;
  const v1::Problem& problem = job.problem();
  const DimValues& dims = *params.dims;
  const std::string& where = params.where;
  const ProgressFn& progress = params.progress;
  TensorSet& tensors = *params.tensors;
  BoundPlan* bound = params.bound;
  ReferenceOp* reference = params.reference;
  const ConcretePlan& cplan = bound->plan();
  cudaStream_t s = ctx_->stream();
  // Fresh inputs, and their golden result, for checking the timed runs.
  const uint64_t seed = TrialSeed(job.seed(), 1 << 20, 0, 0);
  RETURN_IF_ERROR(tensors.FillInputs(seed, s));
  std::map<std::string, std::vector<double>> golden;
  RETURN_IF_ERROR(reference->Golden(tensors, &golden));
  RETURN_IF_ERROR(tensors.PoisonOutputs(s));
  RETURN_IF_ERROR(reference->Eager()->Prepare(tensors));
  // The problem's expert baseline, when it has one, is timed with them.
  EagerPipeline* expert = reference->Expert();
  if (expert != nullptr) RETURN_IF_ERROR(expert->Prepare(tensors));
  RETURN_IF_ERROR(tensors.FillGuards(s));

  progress(absl::StrCat("timing kernel and reference",
                        expert != nullptr ? " and expert baseline" : "", " on ",
                        where));
  // No persisting-L2 window may carry over from an earlier job.
  ctx_->driver().CtxResetPersistingL2Cache();
  InterleavedSampler::Options options;
  options.flush_l2 = !job.timing_hot_l2();
  options.stop = StoppingCriterion::FromJob(job.stopping());
  InterleavedSampler sampler(ctx_, flusher_, blocker_, options);
  auto measure_clock = [&]() -> double {
    absl::StatusOr<double> mhz = clock_->MeasureMhz();
    if (!mhz.ok()) {
      spdlog::warn("SM clock probe: {}", std::string(mhz.status().message()));
      return 0;
    }
    return *mhz;
  };
  const double clock_before = measure_clock();
  // The kernels' own GPU spans, beside the events (best effort: CUPTI may
  // be unavailable or taken by a profiler).
  KernelActivity activity;
  const absl::Status activity_started = activity.Start();
  if (!activity_started.ok()) {
    spdlog::info("no kernel GPU times: {}",
                 std::string(activity_started.message()));
    AddGpuTimeNote(timing,
                   absl::StrCat("no GPU times: ", activity_started.message()));
  }
  std::vector<InterleavedSampler::Workload> workloads = {
      {"kernel", [&] { return bound->Enqueue(); }},
      {"reference", [&] { return reference->Eager()->Run(); }}};
  if (expert != nullptr) {
    workloads.push_back({"expert", [&] { return expert->Run(); }});
  }
  ASSIGN_OR_RETURN(const InterleavedSampler::Result sampled,
                   sampler.Run(workloads));
  if (activity_started.ok()) {
    absl::StatusOr<std::vector<KernelActivity::Record>> records =
        activity.Stop();
    if (!records.ok()) {
      AddGpuTimeNote(
          timing, absl::StrCat("no GPU times: ", records.status().message()));
    } else if (activity.dropped() > 0) {
      // Runs cut from a record stream with holes could straddle two runs.
      AddGpuTimeNote(timing, absl::StrCat("no GPU times: CUPTI dropped ",
                                          activity.dropped(), " records"));
    } else {
      std::vector<int> eager = {reference->Eager()->Kernels()};
      if (expert != nullptr) eager.push_back(expert->Kernels());
      const std::vector<std::vector<double>> us =
          SplitSpans(*records, sampled.order, cplan, eager, sampled.warmup_runs,
                     /*from_submitted=*/true, "GPU time", timing);
      std::vector<int> per_run = {static_cast<int>(cplan.launches.size())};
      per_run.insert(per_run.end(), eager.begin(), eager.end());
      LogRunParts(*records, sampled.order, per_run, sampled.warmup_runs);
      // Only the bases measured are set (an unset Stats means "not
      // measured").
      v1::Stats* (v1::TimingReport::*to[])() = {
          &v1::TimingReport::mutable_kernel_gpu,
          &v1::TimingReport::mutable_reference_gpu,
          &v1::TimingReport::mutable_expert_gpu};
      for (size_t w = 0; w < us.size(); ++w) {
        if (!us[w].empty()) *(timing->*to[w])() = ComputeStats(us[w]);
      }
    }
  }
  const double clock_after = measure_clock();
  timing->set_sm_clock_before_mhz(clock_before);
  timing->set_sm_clock_after_mhz(clock_after);
  timing->set_clock_note(
      ThrottleNote(clock_before, clock_after, ctx_->spec().sm_clock_mhz()));
  timing->set_throttled(!timing->clock_note().empty());

  timing->set_shape_set(job.timing_set());
  timing->set_shape(job.timing_shape().name());
  timing->mutable_dims()->insert(dims.begin(), dims.end());
  *timing->mutable_kernel() = ComputeStats(sampled.samples_us[0]);
  *timing->mutable_reference() = ComputeStats(sampled.samples_us[1]);
  if (expert != nullptr) {
    *timing->mutable_expert() = ComputeStats(sampled.samples_us[2]);
    timing->set_expert_launches(expert->Launches());
    timing->set_expert_name(expert->Name());
  }
  // The graphs are sized from the event medians just set.
  RETURN_IF_ERROR(TimeGraphs(bound, reference, options.flush_l2, timing));
  SetSpeedups(timing);
  timing->set_kernel_launches(bound->launches());
  int64_t tensor_bytes = 0, workspace_bytes = 0;
  for (const TensorSet::Tensor& t : tensors.tensors()) {
    tensor_bytes += static_cast<int64_t>(t.buffer.bytes());
  }
  for (const ConcreteWorkspace& w : cplan.workspaces) {
    workspace_bytes += w.bytes;
  }
  timing->set_kernel_memory_bytes(tensor_bytes + workspace_bytes);
  timing->set_reference_memory_bytes(tensor_bytes +
                                     reference->Eager()->ScratchBytes());
  ASSIGN_OR_RETURN(const double flops, ProblemFlops(problem, dims));
  ASSIGN_OR_RETURN(const double min_bytes, ProblemMinBytes(problem, dims));
  timing->set_flops(flops);
  timing->set_min_bytes(min_bytes);
  timing->set_reference_launches(reference->Eager()->Launches());
  timing->set_reference_name(reference->Eager()->Name());
  timing->set_l2_flushed(options.flush_l2);
  timing->set_stop_reason(sampled.stop_reason);
  timing->set_wall_ms(sampled.wall_ms);

  // The timed runs must have computed the answer, too: the last timed
  // sample in place, then the same module once more on the same inputs
  // (outputs poisoned) and once on fresh inputs.
  std::string damage;
  RETURN_IF_ERROR(tensors.CheckGuards(s, &damage));
  if (!damage.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(damage, " (during timing on ", where, ")"));
  }
  auto check_timed = [&](const char* which) -> absl::Status {
    if (!wrong_output->empty()) return absl::OkStatus();
    v1::TrialResult check;
    RETURN_IF_ERROR(CompareOutputs(problem, tensors, golden, s, &check));
    if (!check.passed()) {
      *wrong_output = DescribeTimedOutputWrong(which, where, check);
    }
    return absl::OkStatus();
  };
  auto run_once = [&]() -> absl::Status {
    RETURN_IF_ERROR(tensors.PoisonOutputs(s));
    RETURN_IF_ERROR(bound->Enqueue());
    const cudaError_t err = cudaStreamSynchronize(s);
    if (err != cudaSuccess) {
      return CudaRtStatus(err, absl::StrCat("running the kernel after timing "
                                            "on ",
                                            where));
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(check_timed("the last timed sample"));
  RETURN_IF_ERROR(run_once());
  RETURN_IF_ERROR(check_timed("a run after timing, same inputs"));
  {
    const uint64_t fresh = TrialSeed(job.seed(), 1 << 21, 0, 1);
    RETURN_IF_ERROR(tensors.FillInputs(fresh, s));
    golden.clear();
    RETURN_IF_ERROR(reference->Golden(tensors, &golden));
    RETURN_IF_ERROR(run_once());
    RETURN_IF_ERROR(check_timed("a run after timing, fresh inputs"));
    // The reference's eager pipeline on the fresh inputs, for the sanity
    // check below.
    RETURN_IF_ERROR(reference->Eager()->Run());
    if (expert != nullptr) RETURN_IF_ERROR(expert->Run());
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s), "running the reference");
  }
  RETURN_IF_ERROR(tensors.CheckGuards(s, &damage));
  if (!damage.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(damage, " (after timing on ", where, ")"));
  }
  bool half_precision = false;
  for (const v1::TensorSpec& t : problem.tensors()) {
    half_precision |=
        t.dtype() == v1::DTYPE_BF16 || t.dtype() == v1::DTYPE_FP16;
  }
  timing->set_floor_us(
      PhysicalFloorUs(flops, min_bytes, ctx_->spec(), half_precision));
  if (wrong_output->empty()) {
    const std::string impossible =
        CheckTimeFloor(timing->kernel().median_us(), timing->floor_us());
    if (!impossible.empty()) return absl::InvalidArgumentError(impossible);
  }
  v1::TrialResult ref_check;
  RETURN_IF_ERROR(
      CompareOutputs(problem, tensors, golden, s, &ref_check, reference));
  if (!ref_check.passed()) {
    spdlog::warn(
        "reference pipeline differs from the fp64 golden result on "
        "{}: rel-norm error {:.3g}",
        where, ref_check.rel_norm_error());
  }
  if (expert != nullptr) {
    v1::TrialResult expert_check;
    RETURN_IF_ERROR(
        CompareOutputs(problem, tensors, golden, s, &expert_check, expert));
    if (!expert_check.passed()) {
      spdlog::warn(
          "expert baseline differs from the fp64 golden result on {}: "
          "rel-norm error {:.3g}",
          where, expert_check.rel_norm_error());
    }
  }
  return absl::OkStatus();
}

}  // namespace kbench
