#include "runner/check/ranked_checker.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "contract/hidden_redact.h"
#include "contract/holdout.h"
#include "contract/problem_util.h"
#include "runner/check/trial_judge.h"
#include "runner/device/cuda_status.h"
#include "runner/reference/golden_buffers.h"

namespace kbench {
namespace {

// Copies `bytes` from `src` on device `src_dev` to `dst` on `dst_dev`, on
// `stream` (rank 0's).
absl::Status CopyPeer(void* dst, int dst_dev, const void* src, int src_dev,
                      size_t bytes, cudaStream_t stream, const char* during) {
  CUDA_RETURN_IF_ERROR(
      cudaMemcpyPeerAsync(dst, dst_dev, src, src_dev, bytes, stream), during);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RankedChecker::Shape> RankedChecker::Prepare(
    const DimValues& dims) {
  const v1::Problem& problem = plans_->parsed().problem();
  const int world = ranks_->world_size();
  Shape shape;
  RETURN_IF_ERROR(ranks_->Select(0));
  ASSIGN_OR_RETURN(shape.gathered, TensorSet::Allocate(*gathered_, dims));
  for (int r = 0; r < world; ++r) {
    const DimValues rank_dims = RankDims(dims, r, world);
    ASSIGN_OR_RETURN(const ConcretePlan* cplan, plans_->At(rank_dims));
    RETURN_IF_ERROR(ranks_->Select(r));
    ASSIGN_OR_RETURN(TensorSet set, TensorSet::Allocate(problem, rank_dims));
    shape.ranks.push_back(std::move(set));
    // A rank-0 tensor is not on the other ranks: they get a null pointer.
    std::map<std::string, CUdeviceptr> absent;
    if (r > 0) {
      for (const v1::TensorSpec& t : problem.tensors()) {
        if (t.placement() == v1::PLACEMENT_RANK0) absent[t.name()] = 0;
      }
    }
    ASSIGN_OR_RETURN(
        std::unique_ptr<BoundPlan> bound,
        modules_[r]->Bind(*cplan, shape.ranks.back(), nullptr, &absent));
    shape.bound.push_back(std::move(bound));
  }
  // Every rank's workspaces exist now: bind the peer() arguments.
  auto lookup = [&shape](const std::string& name,
                         int rank) -> absl::StatusOr<CUdeviceptr> {
    if (rank < 0 || rank >= static_cast<int>(shape.ranks.size())) {
      return absl::InternalError(absl::StrCat("no rank ", rank));
    }
    if (const TensorSet::Tensor* t = shape.ranks[rank].Find(name)) {
      return reinterpret_cast<CUdeviceptr>(t->buffer.get());
    }
    const CUdeviceptr ws = shape.bound[rank]->WorkspacePtr(name);
    if (ws == 0) {
      return absl::InternalError(absl::StrCat(
          "rank ", rank, " has no tensor or workspace '", name, "'"));
    }
    return ws;
  };
  for (std::unique_ptr<BoundPlan>& b : shape.bound) {
    RETURN_IF_ERROR(b->BindPeers(lookup));
  }
  shape.sums.resize(world);
  RETURN_IF_ERROR(ranks_->Select(0));
  return shape;
}

absl::Status RankedChecker::Scatter(Shape* shape) {
  const int world = ranks_->world_size();
  cudaStream_t s0 = ranks_->ctx(0)->stream();
  RETURN_IF_ERROR(ranks_->Select(0));
  for (const TensorSet::Tensor& g : shape->gathered.tensors()) {
    if (g.spec->role() != v1::TENSOR_ROLE_INPUT) continue;
    for (int r = 0; r < world; ++r) {
      const TensorSet::Tensor* t = shape->ranks[r].Find(g.spec->name());
      if (t == nullptr) {
        return absl::InternalError(
            absl::StrCat("rank ", r, " has no '", g.spec->name(), "'"));
      }
      const v1::Placement placement = t->spec->placement();
      if (placement == v1::PLACEMENT_RANK0 && r > 0) continue;
      const size_t bytes = t->buffer.bytes();
      size_t offset = 0;
      if (placement == v1::PLACEMENT_PER_RANK) {
        offset = bytes * static_cast<size_t>(r);
        if (g.buffer.bytes() != bytes * static_cast<size_t>(world)) {
          return absl::InternalError(absl::StrCat(
              "'", g.spec->name(), "' gathered holds ", g.buffer.bytes(),
              " bytes, not ", world, " shards of ", bytes));
        }
      } else if (g.buffer.bytes() != bytes) {
        return absl::InternalError(
            absl::StrCat("'", g.spec->name(), "' gathered holds ",
                         g.buffer.bytes(), " bytes, rank ", r, "'s ", bytes));
      }
      RETURN_IF_ERROR(CopyPeer(
          t->buffer.get(), ranks_->device(r),
          static_cast<const char*>(g.buffer.get()) + offset, ranks_->device(0),
          bytes, s0, "copying an input to its rank"));
    }
  }
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s0), "scattering the inputs");
  for (int r = 0; r < world; ++r) {
    RETURN_IF_ERROR(ranks_->Select(r));
    cudaStream_t s = ranks_->ctx(r)->stream();
    RETURN_IF_ERROR(shape->ranks[r].FillGuards(s));
    RETURN_IF_ERROR(shape->ranks[r].InputChecksums(s, &shape->sums[r]));
  }
  return ranks_->Select(0);
}

absl::Status RankedChecker::RunAll(Shape* shape, const std::string& where,
                                   double* ms) {
  const int world = ranks_->world_size();
  auto on_rank = [&](int r) { return absl::StrCat(where, ", rank ", r); };
  for (int r = 0; r < world; ++r) {
    RETURN_IF_ERROR(ranks_->Select(r));
    cudaStream_t s = ranks_->ctx(r)->stream();
    RETURN_IF_ERROR(shape->ranks[r].PoisonOutputs(s));
    RETURN_IF_ERROR(shape->bound[r]->EnqueueUpTo(0));  // The workspaces.
  }
  for (int r = 0; r < world; ++r) {
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(ranks_->ctx(r)->stream()),
                         "preparing a trial");
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < world; ++r) {
    RETURN_IF_ERROR(ranks_->Select(r));
    const int launches =
        static_cast<int>(shape->bound[r]->plan().launches.size());
    for (int i = 0; i < launches; ++i) {
      absl::Status launched = shape->bound[r]->EnqueueLaunch(i);
      if (launched.ok()) continue;
      // A launch refused on this rank (its rank-dependent block, say) while
      // earlier ranks run: they finish before the error unwinds and their
      // modules are unloaded.
      for (int q = 0; q < r; ++q) {
        (void)cudaStreamSynchronize(ranks_->ctx(q)->stream());
      }
      return launched;
    }
  }
  for (int r = 0; r < world; ++r) {
    const cudaError_t err = cudaStreamSynchronize(ranks_->ctx(r)->stream());
    if (err != cudaSuccess) {
      return CudaRtStatus(err,
                          absl::StrCat("running the kernel on ", on_rank(r)));
    }
  }
  *ms = std::chrono::duration<double, std::milli>(
            std::chrono::steady_clock::now() - t0)
            .count();
  for (int r = 0; r < world; ++r) {
    RETURN_IF_ERROR(ranks_->Select(r));
    cudaStream_t s = ranks_->ctx(r)->stream();
    std::string damage;
    RETURN_IF_ERROR(shape->ranks[r].CheckGuards(s, &damage));
    // A peer may have written it: the message names whose copy it is.
    if (!damage.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(damage, " (rank ", r, "'s copy, on ", where, ")"));
    }
    std::vector<uint64_t> after;
    RETURN_IF_ERROR(shape->ranks[r].InputChecksums(s, &after));
    const std::string changed =
        shape->ranks[r].DescribeInputChanges(shape->sums[r], after);
    if (!changed.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(changed, " (rank ", r, "'s copy, on ", where, ")"));
    }
  }
  return ranks_->Select(0);
}

absl::Status RankedChecker::Judge(Shape* shape, bool sanity,
                                  const std::string& where,
                                  v1::TrialResult* trial, int* failing_rank) {
  RETURN_IF_ERROR(ranks_->Select(0));
  cudaStream_t s0 = ranks_->ctx(0)->stream();
  GoldenBuffers golden;
  // The gathered inputs are as drawn: no candidate was given them.
  RETURN_IF_ERROR(reference_->DeviceGolden(shape->gathered, &golden));
  if (sanity) RETURN_IF_ERROR(SanityOnDevice(*gathered_, golden, where, s0));
  bool all_passed = true;
  *failing_rank = -1;
  for (int r = 0; r < ranks_->world_size(); ++r) {
    // Rank r's copy of each output it holds, into the gathered set, where
    // the golden is.
    bool holds = false;
    for (const TensorSet::Tensor& t : shape->ranks[r].tensors()) {
      if (t.spec->role() != v1::TENSOR_ROLE_OUTPUT) continue;
      if (t.spec->placement() == v1::PLACEMENT_RANK0 && r > 0) continue;
      const TensorSet::Tensor* g = shape->gathered.Find(t.spec->name());
      if (g == nullptr || g->buffer.bytes() != t.buffer.bytes()) {
        return absl::InternalError(absl::StrCat("output '", t.spec->name(),
                                                "' differs between rank ", r,
                                                " and the gathered problem"));
      }
      RETURN_IF_ERROR(CopyPeer(
          g->buffer.get(), ranks_->device(0), t.buffer.get(), ranks_->device(r),
          t.buffer.bytes(), s0, "reading a rank's output"));
      holds = true;
    }
    if (!holds) continue;
    v1::TrialResult one;
    RETURN_IF_ERROR(
        CompareOnDevice(*gathered_, shape->gathered, golden, s0, &one));
    if (!one.passed() && *failing_rank < 0) *failing_rank = r;
    FoldOutput(one, &all_passed, trial);
  }
  trial->set_passed(all_passed);
  return golden.Scrub(s0);
}

absl::Status RankedChecker::Run(const v1::RunnerJob& job,
                                const ProgressFn& progress,
                                v1::CorrectnessReport* report) {
  const v1::Problem& problem = job.problem();
  const int trials = job.trials() > 0 ? job.trials() : 1;
  int total = 0;
  for (const v1::ShapeSet& set : job.check_sets()) {
    total += set.shapes_size() * (set.trials() > 0 ? set.trials() : trials);
  }
  *report->mutable_tolerance() = problem.tolerance();
  seeds_.clear();
  int done = 0;
  for (int si = 0; si < job.check_sets_size(); ++si) {
    const v1::ShapeSet& set = job.check_sets(si);
    const int set_trials = set.trials() > 0 ? set.trials() : trials;
    const std::string hidden_words = HiddenCaseWords(set);
    for (int hi = 0; hi < set.shapes_size(); ++hi) {
      ASSIGN_OR_RETURN(const DimValues dims,
                       ShapeDims(problem, set.shapes(hi)));
      const std::string shown =
          set.hidden() ? hidden_words
                       : absl::StrCat(set.name(), "/", set.shapes(hi).name(),
                                      " (", FormatDims(problem, dims), ")");
      // At a hidden case only the kind of failure is told.
      auto withheld = [&](const absl::Status& st, const char* what) {
        if (st.ok() || !set.hidden()) return st;
        return absl::Status(
            st.code(), absl::StrCat(what, " failed on ", hidden_words,
                                    " (details withheld); ", kKernelAdvice));
      };
      absl::StatusOr<Shape> prepared = Prepare(dims);
      RETURN_IF_ERROR(withheld(prepared.status(), "preparing the ranks"));
      Shape& shape = *prepared;
      for (int t = 0; t < set_trials; ++t) {
        const std::string where = set.hidden()
                                      ? hidden_words
                                      : absl::StrCat(shown, ", trial ", t + 1);
        ++done;
        progress(absl::StrCat("checking ", where, " on ", ranks_->world_size(),
                              " ranks (", done, "/", total, ")"));
        v1::TrialResult* trial = report->add_trials();
        trial->set_hidden(set.hidden());
        trial->set_shape_set(set.name());
        trial->set_shape(set.shapes(hi).name());
        trial->mutable_dims()->insert(dims.begin(), dims.end());
        trial->set_seed(TrialSeed(job.seed(), si, hi, t));
        if (!set.hidden()) seeds_.push_back(trial->seed());
        RETURN_IF_ERROR(ranks_->Select(0));
        RETURN_IF_ERROR(withheld(
            shape.gathered.FillInputs(trial->seed(), ranks_->ctx(0)->stream()),
            "drawing the inputs"));
        RETURN_IF_ERROR(Scatter(&shape));
        // Run 1, judged; run 2 on the same inputs, judged again.
        int failing_rank = -1;
        double ms = 0;
        RETURN_IF_ERROR(withheld(RunAll(&shape, where, &ms), "running"));
        trial->set_kernel_ms(ms);
        RETURN_IF_ERROR(withheld(
            Judge(&shape, /*sanity=*/t == 0,
                  set.hidden()
                      ? "(hidden)"
                      : absl::StrCat(set.name(), "/", set.shapes(hi).name()),
                  trial, &failing_rank),
            "judging"));
        bool second_failed = false;
        if (trial->passed()) {
          RETURN_IF_ERROR(withheld(RunAll(&shape, where, &ms), "running"));
          v1::TrialResult second;
          RETURN_IF_ERROR(withheld(
              Judge(&shape, false, where, &second, &failing_rank), "judging"));
          if (!second.passed()) {
            second_failed = true;
            trial->set_passed(false);
            CopyFigures(second, trial);
          }
        }
        if (!trial->passed() && report->message().empty()) {
          std::string why = set.hidden()
                                ? HiddenTrialFailure(*trial, hidden_words)
                                : TrialFailure(*trial);
          if (failing_rank >= 0) {
            why = absl::StrCat("rank ", failing_rank, " of ",
                               ranks_->world_size(), ": ", why);
          }
          if (second_failed) {
            absl::StrAppend(&why,
                            " (on the second run of the same inputs; the "
                            "first run was right: the kernel must not rely "
                            "on state left by an earlier call)");
          }
          report->set_message(why);
        }
      }
    }
  }
  FinishReport(report);
  return absl::OkStatus();
}

}  // namespace kbench
