// RankedRuns: one shape's buffers on every rank of a problem that spans
// GPUs (docs/multi-gpu.md), and what the check and the timing do with
// them: draw inputs, run the candidate's plan on every rank at once, and
// judge every rank's outputs against the golden on rank 0.
//
// Each rank holds its tensors as the problem places them (shard r of a
// per-rank input on rank r, a copy of a replicated tensor on each, a
// rank-0 tensor on rank 0 only: other ranks get a null pointer), with
// `rank` and `world_size` among its plan's dims and the plan's peer(NAME,
// RANK) arguments bound to the peers' buffers. Rank 0 also holds the
// gathered set (GatheredProblem: every shard in rank order), where the
// inputs are drawn and the golden is computed.
//
// Ownership: borrows the rank group, the modules, the plans and the
// gathered problem, which must outlive it; owns the buffers and the bound
// plans. Thread safety: none (runner thread). Every call leaves rank 0's
// device selected.
#ifndef KBENCH_RUNNER_CHECK_RANKED_RUNS_H_
#define KBENCH_RUNNER_CHECK_RANKED_RUNS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "contract/expr.h"
#include "kbench/v1/problem.pb.h"
#include "kbench/v1/report.pb.h"
#include "runner/device/candidate_module.h"
#include "runner/device/rank_group.h"
#include "runner/device/tensor_set.h"
#include "runner/host/shape_plans.h"
#include "runner/reference/reference_op.h"

namespace kbench {

class RankedRuns {
 public:
  // Allocates every rank's tensors at `dims` (the gathered problem's dims;
  // each rank's plan is resolved at RankDims of them) and binds every
  // rank's plan, peers included. `modules[r]` is the candidate loaded on
  // rank r's context.
  static absl::StatusOr<std::unique_ptr<RankedRuns>> Create(
      RankGroup* ranks, const std::vector<CandidateModule*>& modules,
      ShapePlans* plans, const v1::Problem* gathered, const DimValues& dims);

  RankedRuns(const RankedRuns&) = delete;
  RankedRuns& operator=(const RankedRuns&) = delete;

  // Draws the gathered inputs from `seed` on rank 0 and copies them to the
  // ranks: shard r of a per-rank input to rank r, a whole replicated one
  // to every rank, a rank-0 one to rank 0. Then arms every rank's guards
  // and takes its input checksums.
  absl::Status Draw(uint64_t seed);

  // Poisons every rank's outputs, zeroes every rank's workspaces and waits
  // for all, so that no rank writes into a peer's workspace before the
  // peer zeroed it.
  absl::Status Prepare();
  // Enqueues every rank's launches (no wait: the ranks run at once). When
  // a rank refuses a launch, waits for the ranks already running before
  // returning the refusal.
  absl::Status Launch();
  // Waits for every rank; a sticky error names the rank and `where`.
  absl::Status Wait(const std::string& where);
  // Every rank's guards and input checksums: a write outside a tensor or
  // into any rank's input is InvalidArgument naming whose copy it was.
  absl::Status CheckIntegrity(const std::string& where);
  // Prepare, Launch, Wait and CheckIntegrity; `ms` is the host's time
  // from the launches to the end of the wait.
  absl::Status RunAll(const std::string& where, double* ms);

  // The golden of the gathered inputs on rank 0 (by `reference`), and
  // every rank's copy of every output it holds compared with it there.
  // With `sanity`, the problem's tolerance must reject an all-zero and a
  // constant output at `where`. `failing_rank` is the first rank whose
  // copy failed, or -1.
  absl::Status Judge(ReferenceOp* reference, bool sanity,
                     const std::string& where, v1::TrialResult* trial,
                     int* failing_rank);

  // Rank r's address of a tensor or workspace, for peer() arguments (a
  // fresh copy of a rank's plan binds its peers with it). It borrows this.
  BoundPlan::PeerLookup Peers() const;

  int world_size() const { return static_cast<int>(ranks_.size()); }
  BoundPlan* bound(int rank) { return bound_[rank].get(); }
  TensorSet& tensors(int rank) { return ranks_[rank]; }
  TensorSet& gathered() { return gathered_set_; }

 private:
  RankedRuns(RankGroup* group, const v1::Problem* gathered)
      : group_(group), gathered_(gathered) {}

  RankGroup* group_;
  const v1::Problem* gathered_;
  TensorSet gathered_set_;
  std::vector<TensorSet> ranks_;                   // By rank.
  std::vector<std::unique_ptr<BoundPlan>> bound_;  // By rank.
  std::vector<std::vector<uint64_t>> sums_;        // Input checksums.
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_CHECK_RANKED_RUNS_H_
