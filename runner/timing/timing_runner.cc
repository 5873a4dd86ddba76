#include "runner/timing/timing_runner.h"

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/digest.h"
#include "base/status_macros.h"
#include "contract/problem_util.h"
#include "runner/device/cuda_status.h"
#include "runner/host/run_checks.h"
#include "runner/host/sample_stats.h"
#include "runner/host/stopping_criterion.h"
#include "runner/profile/kernel_activity.h"
#include "runner/timing/interleaved_sampler.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

// The DRAM bytes are to be read twice more, each time in a pass of their
// own, and the least of the three reads kept. Traffic from outside the
// launch only adds to them: on the H200 at the default shape (41 KB read),
// about one read in five came out 2-8 KB high (2026-11-30, with room for 64
// ranges), and ncu itself shows 0 or 256 KiB written at the medium shape
// from run to run. Known defect, found in run r44: on the H200 these
// re-reads never complete (they follow the preset's configuration in the
// same session; CounterProfiler::Reread logs "wanted more than 3 passes"
// and keeps the first read, which is the one that agrees with ncu), and
// cost about 160 ms a profile. See docs/profiling.md for the fix.
CounterProfiler::Options CounterOptions() {
  CounterProfiler::Options options;
  options.least_of = {"dram__bytes_read.sum", "dram__bytes_write.sum"};
  options.rereads = 2;
  return options;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TimingRunner>> TimingRunner::Create(
    DeviceContext* ctx) {
  std::unique_ptr<TimingRunner> r(new TimingRunner(ctx));
  ASSIGN_OR_RETURN(r->flusher_, L2Flusher::Create(ctx->spec().l2_bytes()));
  ASSIGN_OR_RETURN(r->blocker_, StreamBlocker::Create());
  ASSIGN_OR_RETURN(r->clock_, ClockProbe::Create(ctx));
  r->counters_ =
      std::make_unique<PlanCounters>(ctx, r->flusher_.get(), CounterOptions());
  return r;
}

absl::Status TimingRunner::Run(
    const v1::RunnerJob& job, const v1::LaunchPlan& plan,
    const std::string& cubin, CandidateModule* module, ReferenceOp* reference,
    const ProgressFn& progress, v1::TimingReport* timing,
    v1::ProfileReport* profile, std::string* wrong_output) {
  const v1::Problem& problem = job.problem();
  ASSIGN_OR_RETURN(const DimValues dims,
                   ShapeDims(problem, job.timing_shape()));
  const std::string where =
      absl::StrCat(job.timing_set(), "/", job.timing_shape().name(), " (",
                   FormatDims(problem, dims), ")");
  ASSIGN_OR_RETURN(const ConcretePlan cplan,
                   ResolveLaunchPlan(plan, problem, dims));
  RETURN_IF_ERROR(CheckDeviceLimits(cplan, ctx_->spec(), module->StaticSmem()));
  // A helper child still starting (its CUDA context) must not overlap the
  // samples or the counters.
  const auto quiet_start = std::chrono::steady_clock::now();
  counters_->WaitQuiet();
  const double quiet_ms = std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - quiet_start)
                              .count();
  if (quiet_ms >= 1) {
    spdlog::info("waited {:.0f} ms for the line-loads child to settle",
                 quiet_ms);
  }
  ASSIGN_OR_RETURN(TensorSet tensors, TensorSet::Allocate(problem, dims));
  ASSIGN_OR_RETURN(std::unique_ptr<BoundPlan> bound,
                   module->Bind(cplan, tensors));
  cudaStream_t s = ctx_->stream();
  // Fresh inputs, and their golden result, for checking the timed runs.
  const uint64_t seed = TrialSeed(job.seed(), 1 << 20, 0, 0);
  RETURN_IF_ERROR(tensors.FillInputs(seed, s));
  std::map<std::string, std::vector<double>> golden;
  RETURN_IF_ERROR(reference->Golden(tensors, &golden));
  RETURN_IF_ERROR(tensors.PoisonOutputs(s));
  RETURN_IF_ERROR(reference->PrepareEager(tensors));
  RETURN_IF_ERROR(tensors.FillGuards(s));

  progress(absl::StrCat("timing kernel and reference on ", where));
  // No persisting-L2 window may carry over from an earlier job.
  ctx_->driver().CtxResetPersistingL2Cache();
  InterleavedSampler::Options options;
  options.flush_l2 = !job.timing_hot_l2();
  options.stop.max_rel_stderr =
      job.timing_max_rel_stderr() > 0 ? job.timing_max_rel_stderr() : 0.005;
  options.stop.min_samples =
      job.timing_min_samples() > 0 ? job.timing_min_samples() : 20;
  options.stop.max_time_ms =
      job.timing_max_time_ms() > 0 ? job.timing_max_time_ms() : 1000;
  InterleavedSampler sampler(ctx_, flusher_.get(), blocker_.get(), options);
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
  }
  ASSIGN_OR_RETURN(
      const InterleavedSampler::Result sampled,
      sampler.Run({{"kernel", [&] { return bound->Enqueue(); }},
                   {"reference", [&] { return reference->RunEager(); }}}));
  if (activity_started.ok()) {
    absl::StatusOr<std::vector<KernelActivity::Record>> records =
        activity.Stop();
    std::set<std::string> entries;
    for (const ConcreteLaunch& l : cplan.launches) entries.insert(l.entry);
    const std::vector<double> gpu_us =
        records.ok() ? RunTimesUs(*records, entries,
                                  static_cast<int>(cplan.launches.size()),
                                  options.warmup)
                     : std::vector<double>();
    if (!gpu_us.empty()) *timing->mutable_kernel_gpu() = ComputeStats(gpu_us);
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
  if (timing->kernel().median_us() > 0) {
    timing->set_speedup(timing->reference().median_us() /
                        timing->kernel().median_us());
  }
  timing->set_kernel_launches(bound->launches());
  int64_t tensor_bytes = 0, workspace_bytes = 0;
  for (const TensorSet::Tensor& t : tensors.tensors()) {
    tensor_bytes += static_cast<int64_t>(t.buffer.bytes());
  }
  for (const ConcreteWorkspace& w : cplan.workspaces)
    workspace_bytes += w.bytes;
  timing->set_kernel_memory_bytes(tensor_bytes + workspace_bytes);
  timing->set_reference_memory_bytes(tensor_bytes +
                                     reference->EagerScratchBytes());
  ASSIGN_OR_RETURN(const double flops, ProblemFlops(problem, dims));
  ASSIGN_OR_RETURN(const double min_bytes, ProblemMinBytes(problem, dims));
  timing->set_flops(flops);
  timing->set_min_bytes(min_bytes);
  timing->set_reference_launches(reference->EagerLaunches());
  timing->set_reference_name(reference->EagerName());
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
      *wrong_output = absl::StrFormat(
          "the output of the timed runs was wrong (%s) on %s: %d of %d "
          "outputs outside tolerance (max abs error %.3g, rel-norm error "
          "%.3g, %d NaN or unwritten). The kernel must compute the full "
          "result on every call",
          which, where, check.mismatches(), check.elements(),
          check.max_abs_error(), check.rel_norm_error(), check.nan_count());
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
    RETURN_IF_ERROR(reference->RunEager());
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s), "running the reference");
  }
  RETURN_IF_ERROR(tensors.CheckGuards(s, &damage));
  if (!damage.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(damage, " (after timing on ", where, ")"));
  }
  timing->set_floor_us(PhysicalFloorUs(flops, min_bytes, ctx_->spec()));
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
  if (profile != nullptr) {
    progress(absl::StrCat("profiling each launch on ", where));
    profile->set_shape(job.timing_shape().name());
    profile->mutable_dims()->insert(dims.begin(), dims.end());
    RETURN_IF_ERROR(ProfileLaunches(job, bound.get(), module, profile));
    *profile->mutable_timing() = *timing;
    ASSIGN_OR_RETURN(const ProfilePreset preset,
                     ParseProfilePreset(job.profile_preset()));
    progress(absl::StrCat("reading hardware counters (",
                          ProfilePresetName(preset), " preset) on ", where));
    PlanCounters::Candidate candidate;
    candidate.bound = bound.get();
    candidate.cubin = &cubin;
    candidate.source = &job.source();
    candidate.filename = job.filename();
    candidate.job = &job;
    candidate.reload = [this, &cubin, &plan, &problem, &cplan, &tensors]() {
      return LoadBoundCopy(ctx_, cubin, plan, problem, cplan, tensors);
    };
    candidate.reference_key = absl::StrCat(ProtoDigest(job.problem()), "/",
                                           ProtoDigest(job.timing_shape()), "/",
                                           ProfilePresetName(preset));
    RETURN_IF_ERROR(counters_->Add(preset, candidate, reference, profile));
  }
  return absl::OkStatus();
}

absl::Status TimingRunner::ProfileLaunches(const v1::RunnerJob& job,
                                           BoundPlan* bound,
                                           CandidateModule* module,
                                           v1::ProfileReport* profile) {
  cudaStream_t s = ctx_->stream();
  const int segments = bound->segments();
  std::vector<cudaEvent_t> marks(segments + 1);
  for (cudaEvent_t& e : marks) {
    CUDA_RETURN_IF_ERROR(cudaEventCreate(&e), "creating profile events");
  }
  struct Cleanup {
    std::vector<cudaEvent_t>& marks;
    ~Cleanup() {
      for (cudaEvent_t e : marks) cudaEventDestroy(e);
    }
  } cleanup{marks};
  StoppingCriterion::Options stop;
  stop.max_time_ms = 300;
  StoppingCriterion criterion(stop);
  std::vector<std::vector<double>> seg_us(segments);
  std::vector<double> total_us;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - t0)
        .count();
  };
  while (!criterion.Done(elapsed_ms())) {
    RETURN_IF_ERROR(blocker_->Block(s));
    absl::Status queued = flusher_->Flush(s);
    if (queued.ok()) queued = bound->Enqueue(&marks);
    blocker_->Release();
    const cudaError_t err = cudaStreamSynchronize(s);
    RETURN_IF_ERROR(queued);
    if (err != cudaSuccess) return CudaRtStatus(err, "profiling launches");
    if (blocker_->TimedOut()) continue;
    for (int i = 0; i < segments; ++i) {
      float ms = 0;
      cudaEventElapsedTime(&ms, marks[i], marks[i + 1]);
      seg_us[i].push_back(1000.0 * ms);
    }
    float total = 0;
    cudaEventElapsedTime(&total, marks[0], marks[segments]);
    total_us.push_back(1000.0 * total);
    criterion.Add(1000.0 * total);
  }
  *profile->mutable_total() = ComputeStats(total_us);
  const v1::GpuSpec& spec = ctx_->spec();
  const ConcretePlan& plan = bound->plan();
  double sum_median = 0;
  for (int i = 0; i < segments; ++i) {
    sum_median += ComputeStats(seg_us[i]).median_us();
  }
  for (int i = 0; i < segments; ++i) {
    v1::Stats stats = ComputeStats(seg_us[i]);
    if (i == 0 && plan.workspaces.empty()) continue;  // No memset segment.
    v1::LaunchProfile* lp = profile->add_launches();
    *lp->mutable_time() = stats;
    lp->set_share_pct(sum_median > 0 ? 100 * stats.median_us() / sum_median
                                     : 0);
    if (i == 0) {
      lp->set_entry("(workspace zero-fill)");
      continue;
    }
    const ConcreteLaunch& cl = plan.launches[i - 1];
    const CandidateModule::FunctionInfo* info = module->Info(cl.entry);
    lp->set_entry(cl.entry);
    for (int d = 0; d < 3; ++d) {
      lp->add_grid(cl.grid[d]);
      lp->add_block(cl.block[d]);
    }
    const int64_t threads = cl.block[0] * cl.block[1] * cl.block[2];
    const int64_t blocks = cl.grid[0] * cl.grid[1] * cl.grid[2];
    lp->set_dynamic_smem_bytes(cl.smem_bytes);
    lp->set_static_smem_bytes(info->static_smem_bytes);
    lp->set_reserved_smem_bytes(spec.reserved_smem_per_block_bytes());
    lp->set_registers(info->registers);
    lp->set_local_bytes(info->local_bytes);
    int per_sm = 0;
    ctx_->driver().OccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, info->fn, static_cast<int>(threads),
        static_cast<size_t>(cl.smem_bytes));
    lp->set_blocks_per_sm(per_sm);
    const int64_t warps = (threads + spec.warp_size() - 1) / spec.warp_size();
    const int64_t max_warps = spec.max_threads_per_sm() / spec.warp_size();
    lp->set_theoretical_occupancy_pct(
        max_warps > 0 ? 100.0 * per_sm * warps / max_warps : 0);
    if (per_sm > 0 && spec.sm_count() > 0) {
      lp->set_waves(double(blocks) / (double(per_sm) * spec.sm_count()));
    }
  }
  const v1::Problem& problem = job.problem();
  ASSIGN_OR_RETURN(const DimValues dims,
                   ShapeDims(problem, job.timing_shape()));
  ASSIGN_OR_RETURN(const double flops, ProblemFlops(problem, dims));
  ASSIGN_OR_RETURN(const double bytes, ProblemMinBytes(problem, dims));
  profile->set_flops(flops);
  profile->set_min_bytes(bytes);
  const double t_s = profile->total().median_us() * 1e-6;
  if (t_s > 0) {
    profile->set_achieved_tflops(flops / t_s / 1e12);
    profile->set_achieved_gbps(bytes / t_s / 1e9);
  }
  return absl::OkStatus();
}

}  // namespace kbench
