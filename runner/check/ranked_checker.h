// RankedChecker: the correctness check of a kernel for a problem that
// spans GPUs (docs/multi-gpu.md). The kernel's launch plan runs on every
// rank at once, each rank with its own tensors as the problem places them
// (shard r of a per-rank input on rank r, a copy of a replicated tensor on
// each, a rank-0 tensor on rank 0 only: other ranks get a null pointer),
// `rank` and `world_size` among its dims, and peer(NAME, RANK) arguments
// bound to the peers' buffers.
//
// Per trial: the inputs are drawn once, in their gathered form (every
// shard, in rank order), on rank 0, and scattered to the ranks. Guards
// and keyed input checksums are armed on every rank. The plan runs twice
// on the same inputs; after each run, every rank's guards and inputs are
// checked (a write outside a tensor or into any rank's input is REJECTED,
// naming the rank), then the golden kernel computes the gathered outputs
// in fp64 on rank 0, and every rank that holds an output (all ranks for a
// replicated output, rank 0 for a rank-0 one) has its copy compared there,
// as on one GPU. A trial fails on the first wrong rank, which its message
// names. On the first trial of a shape, the tolerance must reject an
// all-zero and a constant output.
//
// Unlike the one-GPU check, nothing runs between the two runs: the
// problem's baseline (an NCCL all-gather across the ranks) is not run yet.
// Before each run every rank's workspaces are zeroed and all ranks wait,
// so that no rank writes into a peer's workspace before the peer's zeroing.
// A hidden shape set is run with its cases' details withheld, as on one
// GPU, but without the extra hidden seeds of a submit: kbd sends hidden
// sets only with submits, which it refuses for such a problem until the
// timing exists.
//
// Ownership: borrows everything. Thread safety: none (runner thread).
#ifndef KBENCH_RUNNER_CHECK_RANKED_CHECKER_H_
#define KBENCH_RUNNER_CHECK_RANKED_CHECKER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kbench/v1/problem.pb.h"
#include "kbench/v1/report.pb.h"
#include "kbench/v1/worker.pb.h"
#include "runner/check/correctness_checker.h"
#include "runner/device/candidate_module.h"
#include "runner/device/rank_group.h"
#include "runner/device/tensor_set.h"
#include "runner/host/shape_plans.h"
#include "runner/reference/reference_op.h"

namespace kbench {

class RankedChecker {
 public:
  // `modules[r]` is the candidate loaded on rank r's context; `plans`
  // resolves the job's plan (against the problem as placed), once per
  // rank and shape; `reference` computes the golden on rank 0 from
  // `gathered` (GatheredProblem of the job's problem), which must outlive
  // the checker.
  RankedChecker(RankGroup* ranks, std::vector<CandidateModule*> modules,
                ReferenceOp* reference, const v1::Problem* gathered,
                ShapePlans* plans)
      : ranks_(ranks),
        modules_(std::move(modules)),
        reference_(reference),
        gathered_(gathered),
        plans_(plans) {}

  // Fills `report`; a wrong result is not an error status. Errors as
  // CorrectnessChecker::Run's, naming the rank.
  absl::Status Run(const v1::RunnerJob& job, const ProgressFn& progress,
                   v1::CorrectnessReport* report);

  // Seeds of the trials run, in order (for the manifest).
  const std::vector<uint64_t>& seeds() const { return seeds_; }

 private:
  // One shape's buffers: the gathered set on rank 0 and each rank's own.
  struct Shape {
    TensorSet gathered;
    std::vector<TensorSet> ranks;
    std::vector<std::unique_ptr<BoundPlan>> bound;  // By rank.
    std::vector<std::vector<uint64_t>> sums;        // Input checksums.
  };

  absl::StatusOr<Shape> Prepare(const DimValues& dims);
  // Copies the gathered inputs to the ranks: shard r of a per-rank input
  // to rank r, a whole replicated one to every rank, a rank-0 one to rank
  // 0. Then arms every rank's guards and takes its input checksums.
  absl::Status Scatter(Shape* shape);
  // Poisons every rank's outputs, zeroes every rank's workspaces, then
  // runs the plan on every rank at once and waits for all; then checks
  // every rank's guards and inputs. `where` names the case in errors.
  absl::Status RunAll(Shape* shape, const std::string& where, double* ms);
  // The golden on rank 0, and every rank's outputs compared with it.
  absl::Status Judge(Shape* shape, bool sanity, const std::string& where,
                     v1::TrialResult* trial, int* failing_rank);

  RankGroup* ranks_;
  std::vector<CandidateModule*> modules_;
  ReferenceOp* reference_;
  const v1::Problem* gathered_;
  ShapePlans* plans_;
  std::vector<uint64_t> seeds_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_CHECK_RANKED_CHECKER_H_
