#include "runner/check/ranked_runs.h"

#include <chrono>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
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

absl::StatusOr<std::unique_ptr<RankedRuns>> RankedRuns::Create(
    RankGroup* ranks, const std::vector<CandidateModule*>& modules,
    ShapePlans* plans, const v1::Problem* gathered, const DimValues& dims) {
  const v1::Problem& problem = plans->parsed().problem();
  const int world = ranks->world_size();
  if (static_cast<int>(modules.size()) != world) {
    return absl::InternalError(
        absl::StrCat(modules.size(), " modules for ", world, " ranks"));
  }
  std::unique_ptr<RankedRuns> runs(new RankedRuns(ranks, gathered));
  RETURN_IF_ERROR(ranks->Select(0));
  ASSIGN_OR_RETURN(runs->gathered_set_, TensorSet::Allocate(*gathered, dims));
  for (int r = 0; r < world; ++r) {
    const DimValues rank_dims = RankDims(dims, r, world);
    ASSIGN_OR_RETURN(const ConcretePlan* cplan, plans->At(rank_dims));
    RETURN_IF_ERROR(ranks->Select(r));
    ASSIGN_OR_RETURN(TensorSet set, TensorSet::Allocate(problem, rank_dims));
    runs->ranks_.push_back(std::move(set));
    // A rank-0 tensor is not on the other ranks: they get a null pointer.
    std::map<std::string, CUdeviceptr> absent;
    if (r > 0) {
      for (const v1::TensorSpec& t : problem.tensors()) {
        if (t.placement() == v1::PLACEMENT_RANK0) absent[t.name()] = 0;
      }
    }
    ASSIGN_OR_RETURN(
        std::unique_ptr<BoundPlan> bound,
        modules[r]->Bind(*cplan, runs->ranks_.back(), nullptr, &absent));
    runs->bound_.push_back(std::move(bound));
  }
  // Every rank's workspaces exist now: bind the peer() arguments.
  const BoundPlan::PeerLookup lookup = runs->Peers();
  for (std::unique_ptr<BoundPlan>& b : runs->bound_) {
    RETURN_IF_ERROR(b->BindPeers(lookup));
  }
  runs->sums_.resize(world);
  RETURN_IF_ERROR(ranks->Select(0));
  return runs;
}

BoundPlan::PeerLookup RankedRuns::Peers() const {
  return
      [this](const std::string& name, int rank) -> absl::StatusOr<CUdeviceptr> {
        if (rank < 0 || rank >= world_size()) {
          return absl::InternalError(absl::StrCat("no rank ", rank));
        }
        if (const TensorSet::Tensor* t = ranks_[rank].Find(name)) {
          return reinterpret_cast<CUdeviceptr>(t->buffer.get());
        }
        const CUdeviceptr ws = bound_[rank]->WorkspacePtr(name);
        if (ws == 0) {
          return absl::InternalError(absl::StrCat(
              "rank ", rank, " has no tensor or workspace '", name, "'"));
        }
        return ws;
      };
}

absl::Status RankedRuns::Draw(uint64_t seed) {
  const int world = world_size();
  RETURN_IF_ERROR(group_->Select(0));
  cudaStream_t s0 = group_->ctx(0)->stream();
  RETURN_IF_ERROR(gathered_set_.FillInputs(seed, s0));
  for (const TensorSet::Tensor& g : gathered_set_.tensors()) {
    if (g.spec->role() != v1::TENSOR_ROLE_INPUT) continue;
    for (int r = 0; r < world; ++r) {
      const TensorSet::Tensor* t = ranks_[r].Find(g.spec->name());
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
          t->buffer.get(), group_->device(r),
          static_cast<const char*>(g.buffer.get()) + offset, group_->device(0),
          bytes, s0, "copying an input to its rank"));
    }
  }
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s0), "scattering the inputs");
  for (int r = 0; r < world; ++r) {
    RETURN_IF_ERROR(group_->Select(r));
    cudaStream_t s = group_->ctx(r)->stream();
    RETURN_IF_ERROR(ranks_[r].FillGuards(s));
    RETURN_IF_ERROR(ranks_[r].InputChecksums(s, &sums_[r]));
  }
  return group_->Select(0);
}

absl::Status RankedRuns::Prepare() {
  const int world = world_size();
  for (int r = 0; r < world; ++r) {
    RETURN_IF_ERROR(group_->Select(r));
    cudaStream_t s = group_->ctx(r)->stream();
    RETURN_IF_ERROR(ranks_[r].PoisonOutputs(s));
    RETURN_IF_ERROR(bound_[r]->EnqueueUpTo(0));  // The workspaces.
  }
  for (int r = 0; r < world; ++r) {
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(group_->ctx(r)->stream()),
                         "preparing a run on every rank");
  }
  return group_->Select(0);
}

absl::Status RankedRuns::Launch() {
  const int world = world_size();
  for (int r = 0; r < world; ++r) {
    RETURN_IF_ERROR(group_->Select(r));
    const int launches = static_cast<int>(bound_[r]->plan().launches.size());
    for (int i = 0; i < launches; ++i) {
      absl::Status launched = bound_[r]->EnqueueLaunch(i);
      if (launched.ok()) continue;
      // A launch refused on this rank (its rank-dependent block, say) while
      // earlier ranks run: they finish before the error unwinds and their
      // modules are unloaded.
      for (int q = 0; q < r; ++q) {
        (void)cudaStreamSynchronize(group_->ctx(q)->stream());
      }
      (void)group_->Select(0);
      return launched;
    }
  }
  return group_->Select(0);
}

absl::Status RankedRuns::Wait(const std::string& where) {
  for (int r = 0; r < world_size(); ++r) {
    const cudaError_t err = cudaStreamSynchronize(group_->ctx(r)->stream());
    if (err != cudaSuccess) {
      return CudaRtStatus(
          err, absl::StrCat("running the kernel on ", where, ", rank ", r));
    }
  }
  return absl::OkStatus();
}

absl::Status RankedRuns::CheckIntegrity(const std::string& where) {
  for (int r = 0; r < world_size(); ++r) {
    RETURN_IF_ERROR(group_->Select(r));
    cudaStream_t s = group_->ctx(r)->stream();
    std::string damage;
    RETURN_IF_ERROR(ranks_[r].CheckGuards(s, &damage));
    // A peer may have written it: the message names whose copy it is.
    if (!damage.empty()) {
      (void)group_->Select(0);
      return absl::InvalidArgumentError(
          absl::StrCat(damage, " (rank ", r, "'s copy, on ", where, ")"));
    }
    std::vector<uint64_t> after;
    RETURN_IF_ERROR(ranks_[r].InputChecksums(s, &after));
    const std::string changed = ranks_[r].DescribeInputChanges(sums_[r], after);
    if (!changed.empty()) {
      (void)group_->Select(0);
      return absl::InvalidArgumentError(
          absl::StrCat(changed, " (rank ", r, "'s copy, on ", where, ")"));
    }
  }
  return group_->Select(0);
}

absl::Status RankedRuns::RunAll(const std::string& where, double* ms) {
  RETURN_IF_ERROR(Prepare());
  const auto t0 = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(Launch());
  RETURN_IF_ERROR(Wait(where));
  *ms = std::chrono::duration<double, std::milli>(
            std::chrono::steady_clock::now() - t0)
            .count();
  return CheckIntegrity(where);
}

absl::Status RankedRuns::Judge(ReferenceOp* reference, bool sanity,
                               const std::string& where, v1::TrialResult* trial,
                               int* failing_rank) {
  RETURN_IF_ERROR(group_->Select(0));
  cudaStream_t s0 = group_->ctx(0)->stream();
  GoldenBuffers golden;
  // The gathered inputs are as drawn: no candidate was given them.
  RETURN_IF_ERROR(reference->DeviceGolden(gathered_set_, &golden));
  if (sanity) RETURN_IF_ERROR(SanityOnDevice(*gathered_, golden, where, s0));
  bool all_passed = true;
  *failing_rank = -1;
  for (int r = 0; r < world_size(); ++r) {
    // Rank r's copy of each output it holds, into the gathered set, where
    // the golden is.
    bool holds = false;
    for (const TensorSet::Tensor& t : ranks_[r].tensors()) {
      if (t.spec->role() != v1::TENSOR_ROLE_OUTPUT) continue;
      if (t.spec->placement() == v1::PLACEMENT_RANK0 && r > 0) continue;
      const TensorSet::Tensor* g = gathered_set_.Find(t.spec->name());
      if (g == nullptr || g->buffer.bytes() != t.buffer.bytes()) {
        return absl::InternalError(absl::StrCat("output '", t.spec->name(),
                                                "' differs between rank ", r,
                                                " and the gathered problem"));
      }
      RETURN_IF_ERROR(CopyPeer(
          g->buffer.get(), group_->device(0), t.buffer.get(), group_->device(r),
          t.buffer.bytes(), s0, "reading a rank's output"));
      holds = true;
    }
    if (!holds) continue;
    v1::TrialResult one;
    RETURN_IF_ERROR(
        CompareOnDevice(*gathered_, gathered_set_, golden, s0, &one));
    if (!one.passed() && *failing_rank < 0) *failing_rank = r;
    FoldOutput(one, &all_passed, trial);
  }
  trial->set_passed(all_passed);
  return golden.Scrub(s0);
}

}  // namespace kbench
