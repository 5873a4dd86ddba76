// RankedChecker: the correctness check of a kernel for a problem that
// spans GPUs (docs/multi-gpu.md). The kernel's launch plan runs on every
// rank at once, each rank with its own tensors as the problem places them
// (shard r of a per-rank input on rank r, a copy of a replicated tensor on
// each, a rank-0 tensor on rank 0 only: other ranks get a null pointer),
// `rank` and `world_size` among its dims, and peer(NAME, RANK) arguments
// bound to the peers' buffers.
//
// Per trial: the inputs are drawn once, in their gathered form, and
// scattered; the plan runs twice on the same inputs; after each run every
// rank's guards and inputs are checked and every rank's outputs judged
// against the golden (RankedRuns). A trial fails on the first wrong rank,
// which its message names. On the first trial of a shape, the tolerance
// must reject an all-zero and a constant output.
//
// Unlike the one-GPU check, nothing runs between the two runs: the
// problem's baseline (an all-gather across the ranks) is timed, not
// checked. Hidden cases (submit) are as on one GPU: shape sets marked
// hidden, and kHiddenExtraTrials extra seeds per visible shape, run as
// trials marked hidden, whose messages and errors name no shape, dims or
// seed.
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

  // Seeds of the visible trials run, in order (for the manifest).
  const std::vector<uint64_t>& visible_seeds() const { return seeds_; }
  int hidden_trials() const { return hidden_trials_; }

 private:
  RankGroup* ranks_;
  std::vector<CandidateModule*> modules_;
  ReferenceOp* reference_;
  const v1::Problem* gathered_;
  ShapePlans* plans_;
  std::vector<uint64_t> seeds_;
  int hidden_trials_ = 0;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_CHECK_RANKED_CHECKER_H_
