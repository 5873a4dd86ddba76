// The launch plan a kernel declares in its own source, in `// @kb` lines:
//
//   // @kb problem gather_linear_fp32
//   // @kb workspace partial bytes(B * K * 4)
//   // @kb launch gather_linear grid(B, cdiv(K, 256)) block(256) smem(0)
//   // @kb launch reduce grid(B) block(K) args(partial, out, B, K)
//
// `launch` lines run in order. grid() and block() take 1 to 3 expressions
// (x, y, z; missing ones are 1); smem() is the dynamic shared memory in bytes
// (default 0); args() lists the parameters passed, by name (default: the
// problem's signature followed by every workspace). `workspace` declares a
// device buffer zero-filled before every run of the plan. `problem` names
// the problem the file is written for. See docs/kernel-contract.md.
//
// Thread safety: free functions on values; safe to call concurrently.
#ifndef KBENCH_CONTRACT_LAUNCH_PLAN_H_
#define KBENCH_CONTRACT_LAUNCH_PLAN_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "contract/expr.h"
#include "kbench/v1/problem.pb.h"
#include "kbench/v1/report.pb.h"

namespace kbench {

// Parses every `// @kb` line of `source` (other comments are ignored).
// Errors are InvalidArgument and name the source line, e.g.
// "line 4: grid() takes 1 to 3 expressions, got 4". A source with no
// launch line is an error that shows an example line.
absl::StatusOr<v1::LaunchPlan> ParseLaunchPlan(absl::string_view source);

// Checks that the plan fits the problem: every expression parses and uses
// only the problem's dims; every args() name is a signature tensor, a dim or
// a workspace; workspace names are unique and clash with no tensor or dim.
// ParsedPlan::Create (contract/parsed_plan.h) does the same and keeps the
// parsed expressions.
absl::Status ValidateLaunchPlan(const v1::LaunchPlan& plan,
                                const v1::Problem& problem);

// Checks that every entry the plan launches is among `kernel_names` (the
// kernels NVRTC compiled). A C++-mangled name that contains the entry
// ("_Z13gather_linearPKf...") gets the hint to declare it extern "C".
absl::Status CheckEntryPoints(const v1::LaunchPlan& plan,
                              const std::vector<std::string>& kernel_names);

struct ConcreteLaunch {
  std::string entry;
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> block = {1, 1, 1};
  int64_t smem_bytes = 0;
  std::vector<std::string> args;  // Resolved: never empty.
  // Per entry of `args`: the rank whose copy is passed, for a
  // `peer(NAME, RANK)` entry, else -1 (the launching rank's own).
  std::vector<int> arg_peers;
  int line = 0;
};

struct ConcreteWorkspace {
  std::string name;
  int64_t bytes = 0;
};

struct ConcretePlan {
  std::vector<ConcreteLaunch> launches;
  std::vector<ConcreteWorkspace> workspaces;
};

// Validates the plan and evaluates it at `dims`. Errors (InvalidArgument)
// name the line and the shape: a non-positive grid or block extent,
// negative smem or bytes. To resolve one plan at several shapes, make a
// ParsedPlan once and call its Resolve.
absl::StatusOr<ConcretePlan> ResolveLaunchPlan(const v1::LaunchPlan& plan,
                                               const v1::Problem& problem,
                                               const DimValues& dims);

// Checks a resolved plan against a GPU's limits: block extents and threads
// per block, grid extents, and dynamic + static shared memory against the
// per-block opt-in limit. `static_smem` maps entry name to its static
// shared memory (missing means 0). Errors are InvalidArgument, e.g.
// "line 3: block(2048) has 2048 threads; this GPU allows 1024 per block".
absl::Status CheckDeviceLimits(
    const ConcretePlan& plan, const v1::GpuSpec& spec,
    const std::map<std::string, int64_t>& static_smem = {});

// The limits of a Hopper GPU (sm_90, as the H100/H200), used by kbd for
// static checks when no worker has reported its own.
v1::GpuSpec DefaultGpuSpec();

}  // namespace kbench

#endif  // KBENCH_CONTRACT_LAUNCH_PLAN_H_
