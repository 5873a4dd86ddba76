#include "contract/launch_plan.h"

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "contract/launch_plan_internal.h"
#include "contract/problem_util.h"

namespace kbench {
namespace internal {

absl::Status LineError(int line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", what));
}

}  // namespace internal

namespace {

using internal::kExampleLaunch;
using internal::LineError;

constexpr char kAxes[] = "xyz";

absl::Status CheckExprNames(int line, absl::string_view what,
                            absl::string_view text,
                            const v1::Problem& problem) {
  if (text.empty()) return LineError(line, absl::StrCat(what, " is empty"));
  absl::StatusOr<Expr> expr = Expr::Parse(text);
  if (!expr.ok()) {
    return LineError(line, absl::StrCat(what, ": ", expr.status().message()));
  }
  for (const std::string& name : expr->Names()) {
    if (!IsDim(problem, name)) {
      std::vector<std::string> dims;
      for (const v1::DimSpec& d : problem.dims()) dims.push_back(d.name());
      return LineError(line,
                       absl::StrCat(what, " '", text, "' uses '", name,
                                    "', which is not a dim of ", problem.name(),
                                    "; expressions may use only the dims ",
                                    absl::StrJoin(dims, ", ")));
    }
  }
  return absl::OkStatus();
}

// Evaluates `text` for ResolveLaunchPlan, naming the line and the dims.
absl::StatusOr<int64_t> EvalAt(int line, absl::string_view what,
                               absl::string_view text,
                               const v1::Problem& problem,
                               const DimValues& dims) {
  absl::StatusOr<int64_t> value = EvalExpr(text, dims);
  if (!value.ok()) {
    return LineError(line, absl::StrCat(what, " at ", FormatDims(problem, dims),
                                        ": ", value.status().message()));
  }
  return *value;
}

}  // namespace

absl::Status ValidateLaunchPlan(const v1::LaunchPlan& plan,
                                const v1::Problem& problem) {
  if (!plan.problem().empty() && plan.problem() != problem.name()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the source declares `// @kb problem ", plan.problem(),
        "` but is being run as problem ", problem.name(),
        "; fix the @kb problem line or request the problem it names"));
  }
  if (plan.launches().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the plan has no launches; add a line such as `", kExampleLaunch, "`"));
  }
  std::map<std::string, int> workspace_lines;
  for (const v1::WorkspaceSpec& ws : plan.workspaces()) {
    if (!IsIdentifier(ws.name())) {
      return LineError(ws.line(), absl::StrCat("workspace name '", ws.name(),
                                               "' is not an identifier"));
    }
    if (FindTensor(problem, ws.name()) != nullptr ||
        IsDim(problem, ws.name())) {
      return LineError(
          ws.line(),
          absl::StrCat("workspace '", ws.name(), "' has the name of a ",
                       IsDim(problem, ws.name()) ? "dim" : "tensor", " of ",
                       problem.name(), "; choose another name"));
    }
    auto [it, inserted] = workspace_lines.emplace(ws.name(), ws.line());
    if (!inserted) {
      return LineError(ws.line(), absl::StrCat("workspace '", ws.name(),
                                               "' is already declared on line ",
                                               it->second));
    }
    RETURN_IF_ERROR(CheckExprNames(
        ws.line(), absl::StrCat("workspace ", ws.name(), " bytes()"),
        ws.bytes(), problem));
  }
  for (const v1::LaunchSpec& launch : plan.launches()) {
    const int line = launch.line();
    if (!IsIdentifier(launch.entry())) {
      return LineError(line, absl::StrCat("kernel name '", launch.entry(),
                                          "' is not a C identifier"));
    }
    if (launch.grid().empty() || launch.grid_size() > 3) {
      return LineError(line, absl::StrCat("grid() takes 1 to 3 expressions, "
                                          "got ",
                                          launch.grid_size()));
    }
    if (launch.block().empty() || launch.block_size() > 3) {
      return LineError(line, absl::StrCat("block() takes 1 to 3 expressions, "
                                          "got ",
                                          launch.block_size()));
    }
    for (int i = 0; i < launch.grid_size(); ++i) {
      RETURN_IF_ERROR(
          CheckExprNames(line, absl::StrCat("grid ", std::string(1, kAxes[i])),
                         launch.grid(i), problem));
    }
    for (int i = 0; i < launch.block_size(); ++i) {
      RETURN_IF_ERROR(
          CheckExprNames(line, absl::StrCat("block ", std::string(1, kAxes[i])),
                         launch.block(i), problem));
    }
    if (!launch.smem().empty()) {
      RETURN_IF_ERROR(CheckExprNames(line, "smem()", launch.smem(), problem));
    }
    for (const std::string& arg : launch.args()) {
      bool is_tensor = false;
      for (const std::string& name : problem.signature()) {
        is_tensor |= name == arg && FindTensor(problem, name) != nullptr;
      }
      if (!is_tensor && !IsDim(problem, arg) &&
          workspace_lines.count(arg) == 0) {
        std::vector<std::string> known(problem.signature().begin(),
                                       problem.signature().end());
        for (const v1::WorkspaceSpec& ws : plan.workspaces()) {
          known.push_back(ws.name());
        }
        return LineError(
            line, absl::StrCat("args() names '", arg,
                               "', which is not a tensor, dim or workspace; "
                               "known names: ",
                               absl::StrJoin(known, ", ")));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckEntryPoints(const v1::LaunchPlan& plan,
                              const std::vector<std::string>& kernel_names) {
  const std::set<std::string> names(kernel_names.begin(), kernel_names.end());
  for (const v1::LaunchSpec& launch : plan.launches()) {
    if (names.count(launch.entry()) != 0) continue;
    // Itanium mangling writes the length before the name: _Z13gather_linear.
    const std::string mangled_part =
        absl::StrCat(launch.entry().size(), launch.entry());
    for (const std::string& name : kernel_names) {
      if (absl::StartsWith(name, "_Z") &&
          absl::StrContains(name, mangled_part)) {
        return LineError(
            launch.line(),
            absl::StrCat("kernel '", launch.entry(),
                         "' was compiled with the C++ mangled name '", name,
                         "'; declare it `extern \"C\" __global__ void ",
                         launch.entry(),
                         "(...)` so it can be launched by "
                         "name"));
      }
    }
    return LineError(
        launch.line(),
        absl::StrCat("@kb launch names kernel '", launch.entry(),
                     "', but the source defines no extern \"C\" __global__ "
                     "function of that name; kernels found: ",
                     kernel_names.empty() ? std::string("(none)")
                                          : absl::StrJoin(kernel_names, ", ")));
  }
  return absl::OkStatus();
}

absl::StatusOr<ConcretePlan> ResolveLaunchPlan(const v1::LaunchPlan& plan,
                                               const v1::Problem& problem,
                                               const DimValues& dims) {
  RETURN_IF_ERROR(ValidateLaunchPlan(plan, problem));
  ConcretePlan out;
  for (const v1::WorkspaceSpec& ws : plan.workspaces()) {
    ConcreteWorkspace cw;
    cw.name = ws.name();
    ASSIGN_OR_RETURN(cw.bytes, EvalAt(ws.line(),
                                      absl::StrCat("workspace ", ws.name(),
                                                   " bytes(", ws.bytes(), ")"),
                                      ws.bytes(), problem, dims));
    if (cw.bytes < 0) {
      return LineError(
          ws.line(),
          absl::StrCat("workspace ", ws.name(), " bytes(", ws.bytes(), ") is ",
                       cw.bytes, " at ", FormatDims(problem, dims),
                       "; the size must be >= 0"));
    }
    out.workspaces.push_back(std::move(cw));
  }
  for (const v1::LaunchSpec& launch : plan.launches()) {
    ConcreteLaunch cl;
    cl.entry = launch.entry();
    cl.line = launch.line();
    for (const auto& [exprs, values, what] :
         {std::make_tuple(&launch.grid(), &cl.grid, "grid"),
          std::make_tuple(&launch.block(), &cl.block, "block")}) {
      for (int i = 0; i < exprs->size(); ++i) {
        const std::string& text = exprs->Get(i);
        const std::string label =
            absl::StrCat(what, " ", std::string(1, kAxes[i]), " = ", text);
        ASSIGN_OR_RETURN((*values)[i],
                         EvalAt(cl.line, label, text, problem, dims));
        if ((*values)[i] < 1) {
          return LineError(
              cl.line,
              absl::StrCat(label, " is ", (*values)[i], " at ",
                           FormatDims(problem, dims), " (launch ", cl.entry,
                           "); grid and block extents must be >= 1"));
        }
      }
    }
    if (!launch.smem().empty()) {
      ASSIGN_OR_RETURN(
          cl.smem_bytes,
          EvalAt(cl.line, absl::StrCat("smem(", launch.smem(), ")"),
                 launch.smem(), problem, dims));
      if (cl.smem_bytes < 0) {
        return LineError(
            cl.line,
            absl::StrCat("smem(", launch.smem(), ") is ", cl.smem_bytes, " at ",
                         FormatDims(problem, dims), " (launch ", cl.entry,
                         "); it must be >= 0"));
      }
    }
    if (launch.args().empty()) {
      cl.args.assign(problem.signature().begin(), problem.signature().end());
      for (const v1::WorkspaceSpec& ws : plan.workspaces()) {
        cl.args.push_back(ws.name());
      }
    } else {
      cl.args.assign(launch.args().begin(), launch.args().end());
    }
    out.launches.push_back(std::move(cl));
  }
  return out;
}

absl::Status CheckDeviceLimits(
    const ConcretePlan& plan, const v1::GpuSpec& spec,
    const std::map<std::string, int64_t>& static_smem) {
  const std::string gpu = spec.name().empty()
                              ? std::string("this GPU")
                              : absl::StrCat("this GPU (", spec.name(), ")");
  for (const ConcreteLaunch& launch : plan.launches) {
    const std::string where =
        absl::StrCat("line ", launch.line, " (launch ", launch.entry, "): ");
    // Threads per block first: it is the usual mistake and the clearest.
    __int128 threads = static_cast<__int128>(launch.block[0]) *
                       launch.block[1] * launch.block[2];
    if (spec.max_threads_per_block() > 0 &&
        threads > spec.max_threads_per_block()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, "block(", absl::StrJoin(launch.block, ", "), ") has ",
          static_cast<int64_t>(threads), " threads; ", gpu, " allows ",
          spec.max_threads_per_block(), " per block"));
    }
    for (int i = 0; i < 3 && i < spec.max_block_dims_size(); ++i) {
      if (launch.block[i] > spec.max_block_dims(i)) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, "block ", std::string(1, kAxes[i]), " = ", launch.block[i],
            " exceeds the limit of ", spec.max_block_dims(i), " on ", gpu,
            " (block limits x, y, z: ",
            absl::StrJoin(spec.max_block_dims(), ", "), ")"));
      }
    }
    for (int i = 0; i < 3 && i < spec.max_grid_dims_size(); ++i) {
      if (launch.grid[i] > spec.max_grid_dims(i)) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, "grid ", std::string(1, kAxes[i]), " = ", launch.grid[i],
            " exceeds the limit of ", spec.max_grid_dims(i), " on ", gpu,
            " (grid limits x, y, z: ",
            absl::StrJoin(spec.max_grid_dims(), ", "),
            "); put the large extent in grid x or loop inside the kernel"));
      }
    }
    auto it = static_smem.find(launch.entry);
    const int64_t static_bytes = it == static_smem.end() ? 0 : it->second;
    const int64_t limit = spec.smem_per_block_optin_bytes() > 0
                              ? spec.smem_per_block_optin_bytes()
                              : spec.smem_per_block_bytes();
    if (limit > 0 && launch.smem_bytes + static_bytes > limit) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "needs ", launch.smem_bytes + static_bytes,
                       " bytes of shared memory per block (dynamic smem ",
                       launch.smem_bytes, " + static ", static_bytes, "); ",
                       gpu, " allows at most ", limit, " per block"));
    }
  }
  return absl::OkStatus();
}

v1::GpuSpec DefaultGpuSpec() {
  v1::GpuSpec spec;
  spec.set_name("NVIDIA H100/H200 (sm_90 defaults)");
  spec.set_arch("sm_90");
  spec.set_cc_major(9);
  spec.set_cc_minor(0);
  spec.set_sm_count(132);
  spec.set_warp_size(32);
  spec.set_max_threads_per_block(1024);
  for (int64_t d : {1024, 1024, 64}) spec.add_max_block_dims(d);
  for (int64_t d : {2147483647, 65535, 65535}) spec.add_max_grid_dims(d);
  spec.set_smem_per_block_bytes(49152);
  spec.set_smem_per_block_optin_bytes(232448);
  spec.set_reserved_smem_per_block_bytes(1024);
  spec.set_smem_per_sm_bytes(233472);
  spec.set_regs_per_sm(65536);
  spec.set_regs_per_block(65536);
  spec.set_max_threads_per_sm(2048);
  spec.set_max_blocks_per_sm(32);
  spec.set_l2_bytes(52428800);
  return spec;
}

}  // namespace kbench
