#include "runner/profile/plan_profiler.h"

#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/digest.h"
#include "base/status_macros.h"
#include "contract/problem_util.h"
#include "runner/device/cuda_status.h"
#include "runner/host/sample_stats.h"
#include "runner/host/stopping_criterion.h"
#include "spdlog/spdlog.h"

namespace kbench {

PlanProfiler::PlanProfiler(DeviceContext* ctx, L2Flusher* flusher,
                           StreamBlocker* blocker)
    : ctx_(ctx),
      flusher_(flusher),
      blocker_(blocker),
      // One read of every metric, DRAM bytes included (docs/profiling.md
      // says why they are not re-read).
      counters_(ctx, flusher, CounterProfiler::Options()) {}

void PlanProfiler::WaitQuiet() {
  const auto quiet_start = std::chrono::steady_clock::now();
  counters_.WaitQuiet();
  const double quiet_ms = std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - quiet_start)
                              .count();
  if (quiet_ms >= 1) {
    spdlog::info("waited {:.0f} ms for the line-loads child to settle",
                 quiet_ms);
  }
}

absl::Status PlanProfiler::Run(const Params& params,
                               const v1::TimingReport& timing,
                               v1::ProfileReport* profile) {
  const v1::RunnerJob& job = *params.job;
  const DimValues& dims = *params.dims;
  const std::string& where = params.where;
  const ProgressFn& progress = params.progress;
  progress(absl::StrCat("profiling each launch on ", where));
  profile->set_shape(job.timing_shape().name());
  profile->set_rank(params.rank);
  profile->set_world_size(params.world_size);
  profile->mutable_dims()->insert(dims.begin(), dims.end());
  RETURN_IF_ERROR(ProfileLaunches(params, profile));
  *profile->mutable_timing() = timing;
  ASSIGN_OR_RETURN(const ProfilePreset preset,
                   ParseProfilePreset(job.profile_preset()));
  progress(absl::StrCat("reading hardware counters (",
                        ProfilePresetName(preset), " preset) on ", where));
  PlanCounters::Candidate candidate;
  candidate.bound = params.bound;
  candidate.cubin = params.cubin;
  candidate.source = &job.source();
  candidate.filename = job.filename();
  if (params.world_size > 1) {
    candidate.no_job_reason = absl::StrCat(
        "the per-line load counts run a kernel in a child process, without "
        "the peers of rank ",
        params.rank, "; its hot lines and their stalls are still reported");
  } else {
    candidate.job = &job;
  }
  candidate.reload = [this, &params, &job]() {
    return LoadBoundCopy(ctx_, *params.cubin, job.plan(), job.problem(),
                         params.bound->plan(), *params.tensors, params.peers);
  };
  candidate.reference_key = absl::StrCat(
      ProtoDigest(job.problem()), "/", ProtoDigest(job.timing_shape()), "/",
      ProfilePresetName(preset), "/rank ", params.rank, "/", params.world_size);
  return counters_.Add(preset, candidate, params.reference, profile);
}

absl::Status PlanProfiler::ProfileLaunches(const Params& params,
                                           v1::ProfileReport* profile) {
  BoundPlan* bound = params.bound;
  CandidateModule* module = params.module;
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
  const v1::Problem& problem =
      params.work != nullptr ? *params.work : params.job->problem();
  const DimValues& dims = *params.dims;
  ASSIGN_OR_RETURN(double flops, ProblemFlops(problem, dims));
  ASSIGN_OR_RETURN(double bytes, ProblemMinBytes(problem, dims));
  flops *= params.work_share;
  bytes *= params.work_share;
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
