#include "contract/contract_text.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "contract/holdout.h"
#include "contract/problem_util.h"

namespace kbench {
namespace {

// Where a tensor lives, in a problem that spans GPUs; "" otherwise.
std::string PlacementNote(const v1::TensorSpec& t) {
  switch (t.placement()) {
    case v1::PLACEMENT_PER_RANK:
      return ", shard r on GPU r";
    case v1::PLACEMENT_REPLICATED:
      return ", on every GPU";
    case v1::PLACEMENT_RANK0:
      return ", on GPU 0";
    default:
      return "";
  }
}

}  // namespace

std::string KernelContractText(const v1::Problem& problem) {
  std::string out;
  absl::StrAppend(
      &out, "KERNEL CONTRACT (problem ", problem.name(), ")\n",
      "- One CUDA C++ file, device code only (no host code, no main, no "
      "<<<>>> launches), at most 256 KiB. Compiled by NVRTC for the GPU's "
      "arch (sm_90 on H100/H200) with --std=c++17 -lineinfo; CUDA headers "
      "such as <cuda_bf16.h> are available, host headers are not.\n",
      "- Define the entry point(s) as extern \"C\" __global__. The signature "
      "kbench passes by default:\n    ",
      EntryPrototype(problem, problem.entry_point()), "\n",
      "- Declare the launch plan in the file, one line per launch, run in "
      "order:\n"
      "    // @kb launch ENTRY grid(x[, y[, z]]) block(x[, y[, z]]) "
      "[smem(bytes)] "
      "[args(name, ...)]\n"
      "  Optional: // @kb workspace NAME bytes(EXPR)  (zero-filled before "
      "every run; pass it by name in args)\n"
      "            // @kb problem ",
      problem.name(), "\n", "  EXPR: integers over the dims (");
  std::vector<std::string> dims;
  for (const v1::DimSpec& d : problem.dims()) dims.push_back(d.name());
  absl::StrAppend(&out, absl::StrJoin(dims, ", "),
                  ") with + - * / % ( ) and cdiv(a,b), min(..), max(..).\n");
  absl::StrAppend(&out,
                  "- Tensors are row-major and contiguous; write every output "
                  "element (outputs start as NaN). Inputs are read-only.\n");
  absl::StrAppend(&out, "- Layouts:");
  for (const v1::TensorSpec& t : problem.tensors()) {
    absl::StrAppend(&out, " ", t.name(), " (", absl::StrJoin(t.shape(), ", "),
                    ") ", DTypeShortName(t.dtype()), PlacementNote(t), ";");
  }
  out.back() = '\n';
  if (problem.world_size() > 1) {
    absl::StrAppend(
        &out, "- Spans ", problem.world_size(),
        " GPUs of one host: the kernel's launch plan runs on every GPU "
        "(rank) at once, each rank with its own copy of every tensor as "
        "placed above. Its expressions and args() may use `rank` and "
        "`world_size`; args() passes rank R's copy of a tensor or workspace "
        "as peer(NAME, R), e.g. peer(x, (rank + 1) % world_size). "
        "check_kernel checks every rank's outputs; submit also times every "
        "rank from a common start to the last rank's end, against the "
        "baseline on every rank, sanitize runs the check under "
        "compute-sanitizer, and profile adds to submit's timing the "
        "counters of rank 0's kernels, run alone with every rank's inputs "
        "in place.\n");
  }
  const v1::Tolerance& tol = problem.tolerance();
  absl::StrAppend(
      &out,
      absl::StrFormat(
          "- Correct means, on every trial: |out - ref| <= %g + "
          "%g * |ref| per element and ||out - ref|| / %s <= "
          "%g, against an fp64 reference on fresh random inputs "
          "(%d trials per shape). NaN never passes.\n",
          tol.atol(), tol.rtol(),
          tol.norm_floor() > 0
              ? absl::StrFormat("max(||ref||, %g * sqrt(n))", tol.norm_floor())
              : std::string("||ref||"),
          tol.max_rel_norm(), problem.trials()));
  absl::StrAppend(&out, "- Shapes checked:");
  for (const v1::ShapeSet& set : problem.shape_sets()) {
    if (set.hidden()) continue;
    std::vector<std::string> shapes;
    for (const v1::Shape& s : set.shapes()) {
      absl::StatusOr<DimValues> d = ShapeDims(problem, s);
      shapes.push_back(absl::StrCat(
          s.name(), " (", d.ok() ? FormatDims(problem, *d) : "?", ")"));
    }
    absl::StrAppend(&out, "\n    ", set.name(), ": ",
                    absl::StrJoin(shapes, ", "));
  }
  absl::StrAppend(&out, "\n  run_correctness checks ",
                  absl::StrJoin(problem.check_shape_sets(), " + "),
                  "; submit_kernel also times the first shape of ",
                  problem.default_shape_set(), " against the reference.\n");
  if (!problem.holdout_classes().empty()) {
    absl::StrAppend(
        &out,
        "- submit_kernel checks sizes across the whole domain, by class: for "
        "every submission kbd draws hidden cases afresh from each size "
        "class below (never shown; a failure names the class, not the "
        "case). Write the kernel for every shape in the domain, not for "
        "the public ones. run_correctness with shape_set \"random\" draws "
        "such cases with a fresh seed and shows their dims.");
    for (const v1::HoldoutClass& c : problem.holdout_classes()) {
      absl::StrAppend(&out, "\n    ", c.name(), " x", c.count(), ": ",
                      HoldoutClassText(c));
    }
    absl::StrAppend(&out, "\n");
  }
  if (!problem.example_source().empty()) {
    absl::StrAppend(&out, "EXAMPLE (a correct, naive kernel):\n",
                    problem.example_source());
  }
  return out;
}

}  // namespace kbench
