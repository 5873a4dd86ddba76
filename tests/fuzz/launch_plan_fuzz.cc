// Fuzz target: the launch plan a kernel declares in its `// @kb` lines
// (ParseLaunchPlan), which kbd reads from every untrusted source before it
// compiles it. A plan that parses is validated against each shipped
// problem; one that validates is resolved at every shape of the problem and
// checked against the default GPU limits and the entry points, as
// job_service does. The input is the whole kernel source.
//
// Each shipped problem is also tried as if it spanned two GPUs (its first
// input per rank, the other tensors replicated), resolved at both ranks,
// so that `rank`, `world_size` and `peer(NAME, RANK)` are exercised.
//
// Invariants beyond "no crash, leak or UB": errors are InvalidArgument with
// a message; a plan that validates resolves without overflow-induced UB;
// every resolved argument names its rank: its own, or one of the world's.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "contract/launch_plan.h"
#include "contract/problem_util.h"
#include "tests/fuzz/fuzz_util.h"

namespace kbench {
namespace {

void CheckError(const absl::Status& status, absl::string_view where) {
  if (status.ok()) return;
  if (status.code() != absl::StatusCode::kInvalidArgument) {
    fuzz::Fail("a launch plan error is not InvalidArgument", status.ToString());
  }
  if (status.message().empty()) fuzz::Fail("empty error message", where);
}

void ExerciseAt(const v1::LaunchPlan& plan, const v1::Problem& problem,
                const DimValues& dims);

void Exercise(const v1::LaunchPlan& plan, const v1::Problem& problem) {
  absl::Status valid = ValidateLaunchPlan(plan, problem);
  CheckError(valid, "ValidateLaunchPlan");
  if (!valid.ok()) return;
  CheckError(CheckEntryPoints(plan, {problem.entry_point(),
                                     "_Z13gather_linearPKfS0_S0_Pfiiii"}),
             "CheckEntryPoints");
  for (const v1::ShapeSet& set : problem.shape_sets()) {
    for (const v1::Shape& shape : set.shapes()) {
      absl::StatusOr<DimValues> dims = ShapeDims(problem, shape);
      if (!dims.ok()) fuzz::Fail("a shipped shape has no dims", shape.name());
      for (int rank = 0; rank < std::max(1, problem.world_size()); ++rank) {
        ExerciseAt(plan, problem,
                   SpansGpus(problem)
                       ? RankDims(*dims, rank, problem.world_size())
                       : *dims);
      }
    }
  }
}

void ExerciseAt(const v1::LaunchPlan& plan, const v1::Problem& problem,
                const DimValues& dims) {
  absl::StatusOr<ConcretePlan> resolved =
      ResolveLaunchPlan(plan, problem, dims);
  CheckError(resolved.status(), "ResolveLaunchPlan");
  if (!resolved.ok()) return;
  if (resolved->launches.size() != static_cast<size_t>(plan.launches_size())) {
    fuzz::Fail("ResolveLaunchPlan lost or added launches");
  }
  for (const ConcreteLaunch& l : resolved->launches) {
    if (l.args.empty()) fuzz::Fail("a resolved launch has no args");
    if (l.arg_peers.size() != l.args.size()) {
      fuzz::Fail("a resolved launch's peers do not match its args");
    }
    for (int peer : l.arg_peers) {
      if (peer < -1 || peer >= std::max(1, problem.world_size())) {
        fuzz::Fail("a resolved peer is outside the world");
      }
    }
  }
  CheckError(
      CheckDeviceLimits(*resolved, DefaultGpuSpec(), {{"gather_linear", 1024}}),
      "CheckDeviceLimits");
}

// `problem` as if it spanned two GPUs: its first input per rank, every
// other tensor replicated.
v1::Problem AsTwoRanks(const v1::Problem& problem) {
  v1::Problem out = problem;
  out.set_world_size(2);
  bool first = true;
  for (v1::TensorSpec& t : *out.mutable_tensors()) {
    const bool per_rank = first && t.role() == v1::TENSOR_ROLE_INPUT;
    first = first && !per_rank;
    t.set_placement(per_rank ? v1::PLACEMENT_PER_RANK
                             : v1::PLACEMENT_REPLICATED);
  }
  return out;
}

}  // namespace
}  // namespace kbench

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kbench::fuzz::QuietLogs();
  (void)kbench::fuzz::ShippedProblems();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<kbench::v1::LaunchPlan> plan =
      kbench::ParseLaunchPlan(kbench::fuzz::AsText(data, size));
  kbench::CheckError(plan.status(), "ParseLaunchPlan");
  if (!plan.ok()) return 0;
  for (const kbench::v1::Problem& problem : kbench::fuzz::ShippedProblems()) {
    kbench::Exercise(*plan, problem);
    kbench::Exercise(*plan, kbench::AsTwoRanks(problem));
  }
  return 0;
}
