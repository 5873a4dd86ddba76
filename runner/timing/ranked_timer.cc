#include "runner/timing/ranked_timer.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "runner/device/cuda_status.h"
#include "runner/host/run_checks.h"
#include "runner/host/run_windows.h"
#include "runner/host/sample_stats.h"
#include "runner/host/stopping_criterion.h"
#include "runner/profile/kernel_activity.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

// Untimed runs of each workload first; samples of each per batch.
constexpr int kWarmup = 3;
constexpr int kBatch = 8;
constexpr const char* kSides[] = {"kernel", "baseline"};

}  // namespace

absl::StatusOr<std::unique_ptr<RankedTimer>> RankedTimer::Create(
    RankGroup* ranks, bool tool_attached) {
  std::unique_ptr<RankedTimer> t(new RankedTimer(ranks));
  for (int r = 0; r < ranks->world_size(); ++r) {
    RETURN_IF_ERROR(ranks->Select(r));
    ASSIGN_OR_RETURN(std::unique_ptr<L2Flusher> flusher,
                     L2Flusher::Create(ranks->ctx(r)->spec().l2_bytes()));
    t->flushers_.push_back(std::move(flusher));
    ASSIGN_OR_RETURN(std::unique_ptr<StreamBlocker> blocker,
                     StreamBlocker::Create(2000, tool_attached));
    t->blockers_.push_back(std::move(blocker));
    cudaEvent_t ready = nullptr;
    CUDA_RETURN_IF_ERROR(
        cudaEventCreateWithFlags(&ready, cudaEventDisableTiming),
        "creating a rank's barrier event");
    t->ready_.push_back(ready);
  }
  RETURN_IF_ERROR(ranks->Select(0));
  return t;
}

RankedTimer::~RankedTimer() {
  for (cudaEvent_t e : ready_) (void)cudaEventDestroy(e);
}

absl::Status RankedTimer::EnqueueRun(
    const Params& params, int w, bool flush,
    const std::vector<std::unique_ptr<EventTimer>>* timers, int slot) {
  const int world = ranks_->world_size();
  RankedRuns& runs = *params.runs;
  for (int r = 0; r < world; ++r) {
    RETURN_IF_ERROR(ranks_->Select(r));
    cudaStream_t s = ranks_->ctx(r)->stream();
    if (flush) RETURN_IF_ERROR(flushers_[r]->Flush(s));
    // The kernel's workspaces are zeroed on every rank before any rank
    // starts: a peer may write into them.
    if (w == 0) RETURN_IF_ERROR(runs.bound(r)->EnqueueUpTo(0));
    CUDA_RETURN_IF_ERROR(cudaEventRecord(ready_[r], s),
                         "recording a rank's barrier event");
  }
  for (int r = 0; r < world; ++r) {
    RETURN_IF_ERROR(ranks_->Select(r));
    cudaStream_t s = ranks_->ctx(r)->stream();
    for (int q = 0; q < world; ++q) {
      if (q == r) continue;
      CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(s, ready_[q], 0),
                           "waiting for every rank before a run");
    }
    if (timers != nullptr) RETURN_IF_ERROR((*timers)[r]->Start(slot, s));
    if (w == 0) {
      const int n = static_cast<int>(runs.bound(r)->plan().launches.size());
      for (int i = 0; i < n; ++i) {
        RETURN_IF_ERROR(runs.bound(r)->EnqueueLaunch(i));
      }
      if (timers != nullptr) RETURN_IF_ERROR((*timers)[r]->Stop(slot, s));
    }
  }
  if (w == 0) return ranks_->Select(0);
  // The baseline step by step across the ranks: a collective step is
  // enqueued on every rank inside one group.
  for (int i = 0; i < params.baselines[0]->steps(); ++i) {
    const bool collective = params.baselines[0]->collective_step(i);
    if (collective) RETURN_IF_ERROR(params.collective->BeginStep());
    absl::Status stepped = absl::OkStatus();
    for (int r = 0; r < world && stepped.ok(); ++r) {
      stepped = ranks_->Select(r);
      if (stepped.ok()) stepped = params.baselines[r]->RunStep(i);
    }
    if (collective) {
      const absl::Status ended = params.collective->EndStep();
      if (stepped.ok()) stepped = ended;
    }
    RETURN_IF_ERROR(stepped);
  }
  if (timers != nullptr) {
    for (int r = 0; r < world; ++r) {
      RETURN_IF_ERROR(ranks_->Select(r));
      RETURN_IF_ERROR((*timers)[r]->Stop(slot, ranks_->ctx(r)->stream()));
    }
  }
  return ranks_->Select(0);
}

absl::Status RankedTimer::JudgeTimed(const Params& params, const char* which,
                                     std::string* wrong) {
  if (!wrong->empty()) return absl::OkStatus();
  RETURN_IF_ERROR(
      params.runs->CheckIntegrity(absl::StrCat(params.where, ", ", which)));
  v1::TrialResult check;
  int failing_rank = -1;
  RETURN_IF_ERROR(params.runs->Judge(params.golden, /*sanity=*/false,
                                     params.where, &check, &failing_rank));
  if (!check.passed()) {
    *wrong = DescribeTimedOutputWrong(
        which,
        absl::StrCat(params.where, ", rank ", failing_rank, " of ",
                     ranks_->world_size()),
        check);
  }
  return absl::OkStatus();
}

absl::Status RankedTimer::Run(const Params& params, v1::TimingReport* timing,
                              std::string* wrong_output) {
  const v1::RunnerJob& job = *params.job;
  const int world = ranks_->world_size();
  RankedRuns& runs = *params.runs;
  if (static_cast<int>(params.baselines.size()) != world ||
      params.collective == nullptr) {
    return absl::InternalError(absl::StrCat(
        params.baselines.size(), " baselines for ", world, " ranks"));
  }
  RETURN_IF_ERROR(runs.Draw(TrialSeed(job.seed(), 1 << 20, 0, 0)));
  for (int r = 0; r < world; ++r) {
    RETURN_IF_ERROR(ranks_->Select(r));
    RETURN_IF_ERROR(params.baselines[r]->Prepare(runs.tensors(r)));
    if (params.baselines[r]->steps() != params.baselines[0]->steps()) {
      return absl::InternalError("the ranks' baselines differ in steps");
    }
  }
  RETURN_IF_ERROR(runs.Prepare());
  // Kernels per run of each workload on each rank (memsets are not kernel
  // records).
  std::vector<std::vector<int>> kernels(world);
  for (int r = 0; r < world; ++r) {
    RETURN_IF_ERROR(ranks_->Select(r));
    kernels[r] = {static_cast<int>(runs.bound(r)->plan().launches.size()),
                  params.baselines[r]->Kernels()};
  }
  RETURN_IF_ERROR(ranks_->Select(0));
  params.progress(absl::StrCat("timing kernel and baseline on ", world,
                               " ranks on ", params.where));
  // No persisting-L2 window may carry over from an earlier job (the call
  // acts on the current context).
  for (int r = 0; r < world; ++r) {
    RETURN_IF_ERROR(ranks_->Select(r));
    ranks_->ctx(r)->driver().CtxResetPersistingL2Cache();
  }
  RETURN_IF_ERROR(ranks_->Select(0));
  const bool flush = !job.timing_hot_l2();
  const StoppingCriterion::Options stop =
      StoppingCriterion::FromJob(job.stopping());

  KernelActivity activity;
  const absl::Status recording = activity.Start();
  if (!recording.ok()) {
    AddGpuTimeNote(timing, absl::StrCat("no GPU times: ", recording.message()));
  }
  std::vector<uint32_t> streams(world);
  bool streams_known = recording.ok();
  for (int r = 0; r < world && streams_known; ++r) {
    absl::StatusOr<uint32_t> id =
        KernelActivity::StreamId(ranks_->ctx(r)->stream());
    if (!id.ok()) {
      AddGpuTimeNote(timing,
                     absl::StrCat("no GPU times: ", id.status().message()));
      streams_known = false;
    } else {
      streams[r] = *id;
    }
  }

  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - t0)
        .count();
  };
  std::vector<int> order;  // The workload of every run, as they ran.
  absl::Status warmed = absl::OkStatus();
  for (int i = 0; i < kWarmup && warmed.ok(); ++i) {
    for (int w = 0; w < 2 && warmed.ok(); ++w) {
      warmed = EnqueueRun(params, w, false, nullptr, 0);
      if (warmed.ok()) order.push_back(w);
    }
  }
  // A launch refused on one rank (at a shape the check did not run) leaves
  // the others running: they finish before the error unwinds.
  const absl::Status waited =
      runs.Wait(absl::StrCat(params.where, ", warming up"));
  RETURN_IF_ERROR(warmed);
  RETURN_IF_ERROR(waited);
  // Batches of at most a quarter of the time limit.
  const int batch =
      BatchWithinLimit(kBatch, elapsed_ms() / kWarmup, stop.max_time_ms);
  std::vector<std::unique_ptr<EventTimer>> timers;
  for (int r = 0; r < world; ++r) {
    RETURN_IF_ERROR(ranks_->Select(r));
    ASSIGN_OR_RETURN(std::unique_ptr<EventTimer> t,
                     EventTimer::Create(batch * 2));
    timers.push_back(std::move(t));
  }
  std::vector<StoppingCriterion> criteria(2, StoppingCriterion(stop));
  std::vector<std::vector<double>> samples(2);
  // Each rank's own event spans, by rank and workload.
  std::vector<std::vector<std::vector<double>>> rank_samples(
      world, std::vector<std::vector<double>>(2));
  int round = 0, discarded = 0;
  auto done = [&] {
    const double ms = elapsed_ms();
    return criteria[0].Done(ms) && criteria[1].Done(ms);
  };
  while (!done()) {
    for (int r = 0; r < world; ++r) {
      RETURN_IF_ERROR(ranks_->Select(r));
      RETURN_IF_ERROR(blockers_[r]->Block(ranks_->ctx(r)->stream()));
    }
    absl::Status queued = absl::OkStatus();
    for (int j = 0; j < batch && queued.ok(); ++j, ++round) {
      for (int k = 0; k < 2 && queued.ok(); ++k) {
        const int w = (k + round) % 2;  // Alternate who goes first.
        queued = EnqueueRun(params, w, flush, &timers, j * 2 + w);
        if (queued.ok()) order.push_back(w);
      }
    }
    for (std::unique_ptr<StreamBlocker>& b : blockers_) b->Release();
    const absl::Status waited = runs.Wait(params.where);
    RETURN_IF_ERROR(queued);
    RETURN_IF_ERROR(waited);
    bool timed_out = false;
    for (const std::unique_ptr<StreamBlocker>& b : blockers_) {
      timed_out = timed_out || b->TimedOut();
    }
    if (timed_out) {
      ++discarded;
      if ((criteria[0].count() == 0 || criteria[1].count() == 0) &&
          elapsed_ms() >= stop.max_time_ms) {
        return absl::UnavailableError(absl::StrFormat(
            "timing got no samples in %.0f ms: a rank's stream blocker timed "
            "out in all %d batches",
            elapsed_ms(), discarded));
      }
      continue;
    }
    for (int slot = 0; slot < batch * 2; ++slot) {
      // The slowest rank's span: events of two GPUs cannot be compared.
      double us = 0;
      for (int r = 0; r < world; ++r) {
        ASSIGN_OR_RETURN(const double rank_us, timers[r]->ElapsedUs(slot));
        rank_samples[r][slot % 2].push_back(rank_us);
        us = std::max(us, rank_us);
      }
      samples[slot % 2].push_back(us);
      criteria[slot % 2].Add(us);
    }
  }
  const double wall_ms = elapsed_ms();
  RETURN_IF_ERROR(ranks_->Select(0));

  // Each rank's own GPU spans, by rank and workload, where CUPTI gave them.
  std::vector<std::vector<std::vector<double>>> rank_gpu(world);
  if (recording.ok()) {
    absl::StatusOr<std::vector<KernelActivity::Record>> records =
        activity.Stop();
    std::string why;
    if (!records.ok()) {
      why = absl::StrCat("no GPU times: ", records.status().message());
    } else if (activity.dropped() > 0) {
      why = absl::StrCat("no GPU times: CUPTI dropped ", activity.dropped(),
                         " records");
    } else if (streams_known) {
      std::vector<std::vector<RunWindow>> by_rank(world);
      for (int r = 0; r < world && why.empty(); ++r) {
        std::vector<KernelActivity::Record> mine;
        for (const KernelActivity::Record& rec : *records) {
          if (static_cast<int>(rec.device_id) == ranks_->device(r) &&
              rec.stream_id == streams[r]) {
            mine.push_back(rec);
          }
        }
        by_rank[r] = ScheduledWindows(mine, order, kernels[r],
                                      /*from_submitted=*/true, &why);
        if (!why.empty()) why = absl::StrCat("rank ", r, ": ", why);
      }
      if (why.empty()) {
        const std::vector<std::vector<double>> us =
            JoinRankWindowsUs(by_rank, order, 2, kWarmup, &why);
        if (why.empty()) {
          *timing->mutable_kernel_gpu() = ComputeStats(us[0]);
          *timing->mutable_reference_gpu() = ComputeStats(us[1]);
          for (int r = 0; r < world; ++r) {
            std::string rank_why;
            rank_gpu[r] =
                JoinRankWindowsUs({by_rank[r]}, order, 2, kWarmup, &rank_why);
            if (!rank_why.empty()) {
              spdlog::warn("rank {}'s own GPU times: {}", r, rank_why);
            }
          }
        }
      }
      if (!why.empty()) why = absl::StrCat("no GPU times: ", why);
    }
    if (!why.empty()) {
      spdlog::info("{}", why);
      AddGpuTimeNote(timing, why);
    }
  }

  timing->set_shape_set(job.timing_set());
  timing->set_shape(job.timing_shape().name());
  const DimValues& dims = runs.gathered().dims();
  timing->mutable_dims()->insert(dims.begin(), dims.end());
  *timing->mutable_kernel() = ComputeStats(samples[0]);
  *timing->mutable_reference() = ComputeStats(samples[1]);
  SetSpeedups(timing);
  for (int r = 0; r < world; ++r) {
    v1::RankTiming* mine = timing->add_ranks();
    mine->set_rank(r);
    *mine->mutable_kernel() = ComputeStats(rank_samples[r][0]);
    *mine->mutable_reference() = ComputeStats(rank_samples[r][1]);
    if (rank_gpu[r].size() == 2 && !rank_gpu[r][0].empty() &&
        !rank_gpu[r][1].empty()) {
      *mine->mutable_kernel_gpu() = ComputeStats(rank_gpu[r][0]);
      *mine->mutable_reference_gpu() = ComputeStats(rank_gpu[r][1]);
    }
  }
  timing->set_kernel_launches(runs.bound(0)->launches());
  timing->set_reference_launches(params.baselines[0]->Launches());
  timing->set_reference_name(params.baselines[0]->Name());
  int64_t tensor_bytes = 0, workspace_bytes = 0;
  for (const TensorSet::Tensor& t : runs.tensors(0).tensors()) {
    tensor_bytes += static_cast<int64_t>(t.buffer.bytes());
  }
  for (const ConcreteWorkspace& w : runs.bound(0)->plan().workspaces) {
    workspace_bytes += w.bytes;
  }
  // Rank 0's: every rank holds as much, but for its rank-0 tensors.
  timing->set_kernel_memory_bytes(tensor_bytes + workspace_bytes);
  timing->set_reference_memory_bytes(tensor_bytes +
                                     params.baselines[0]->ScratchBytes());
  timing->set_flops(params.flops);
  timing->set_min_bytes(params.min_bytes);
  timing->set_l2_flushed(flush);
  timing->set_stop_reason(
      absl::StrCat(kSides[0], ": ", criteria[0].Reason(wall_ms), "; ",
                   kSides[1], ": ", criteria[1].Reason(wall_ms)));
  timing->set_wall_ms(wall_ms);

  // The timed runs must have computed the answer: the last timed run in
  // place, then one more on fresh inputs with the outputs poisoned.
  RETURN_IF_ERROR(JudgeTimed(params, "the last timed sample", wrong_output));
  RETURN_IF_ERROR(runs.Draw(TrialSeed(job.seed(), 1 << 21, 0, 1)));
  double ms = 0;
  RETURN_IF_ERROR(
      runs.RunAll(absl::StrCat(params.where, ", a run after timing"), &ms));
  RETURN_IF_ERROR(
      JudgeTimed(params, "a run after timing, fresh inputs", wrong_output));
  // The floor of R GPUs sharing the work: a lower bound however the work
  // is spread (a replicated output written on every rank only adds to it).
  timing->set_floor_us(
      PhysicalFloorUs(params.flops / world, params.min_bytes / world,
                      ranks_->ctx(0)->spec(), params.half_precision));
  if (wrong_output->empty()) {
    const std::string impossible =
        CheckTimeFloor(timing->kernel().median_us(), timing->floor_us());
    if (!impossible.empty()) return absl::InvalidArgumentError(impossible);
  }
  return absl::OkStatus();
}

}  // namespace kbench
