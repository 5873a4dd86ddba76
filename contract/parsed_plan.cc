#include "contract/parsed_plan.h"

#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "contract/launch_plan_internal.h"
#include "contract/problem_util.h"

namespace kbench {
namespace {

using internal::kAxes;
using internal::kExampleLaunch;
using internal::LineError;

// Parses `text` and checks that it uses only the problem's dims.
absl::StatusOr<Expr> ParseDimExpr(int line, absl::string_view what,
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
  return expr;
}

// Evaluates `expr` for Resolve, naming the line and the dims.
absl::StatusOr<int64_t> EvalAt(int line, absl::string_view what,
                               const Expr& expr, const v1::Problem& problem,
                               const DimValues& dims) {
  absl::StatusOr<int64_t> value = expr.Eval(dims);
  if (!value.ok()) {
    return LineError(line, absl::StrCat(what, " at ", FormatDims(problem, dims),
                                        ": ", value.status().message()));
  }
  return *value;
}

}  // namespace

absl::StatusOr<ParsedPlan> ParsedPlan::Create(const v1::LaunchPlan& plan,
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
  ParsedPlan parsed(plan, problem);
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
    ASSIGN_OR_RETURN(
        Expr bytes,
        ParseDimExpr(ws.line(),
                     absl::StrCat("workspace ", ws.name(), " bytes()"),
                     ws.bytes(), problem));
    parsed.workspace_bytes_.push_back(std::move(bytes));
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
    Launch pl;
    for (int i = 0; i < launch.grid_size(); ++i) {
      ASSIGN_OR_RETURN(
          Expr e,
          ParseDimExpr(line, absl::StrCat("grid ", std::string(1, kAxes[i])),
                       launch.grid(i), problem));
      pl.grid.push_back(std::move(e));
    }
    for (int i = 0; i < launch.block_size(); ++i) {
      ASSIGN_OR_RETURN(
          Expr e,
          ParseDimExpr(line, absl::StrCat("block ", std::string(1, kAxes[i])),
                       launch.block(i), problem));
      pl.block.push_back(std::move(e));
    }
    if (!launch.smem().empty()) {
      ASSIGN_OR_RETURN(pl.smem,
                       ParseDimExpr(line, "smem()", launch.smem(), problem));
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
    parsed.launches_.push_back(std::move(pl));
  }
  return parsed;
}

absl::StatusOr<ConcretePlan> ParsedPlan::Resolve(const DimValues& dims) const {
  const v1::Problem& problem = *problem_;
  ConcretePlan out;
  for (int w = 0; w < plan_.workspaces_size(); ++w) {
    const v1::WorkspaceSpec& ws = plan_.workspaces(w);
    ConcreteWorkspace cw;
    cw.name = ws.name();
    ASSIGN_OR_RETURN(cw.bytes, EvalAt(ws.line(),
                                      absl::StrCat("workspace ", ws.name(),
                                                   " bytes(", ws.bytes(), ")"),
                                      workspace_bytes_[w], problem, dims));
    if (cw.bytes < 0) {
      return LineError(
          ws.line(),
          absl::StrCat("workspace ", ws.name(), " bytes(", ws.bytes(), ") is ",
                       cw.bytes, " at ", FormatDims(problem, dims),
                       "; the size must be >= 0"));
    }
    out.workspaces.push_back(std::move(cw));
  }
  for (int l = 0; l < plan_.launches_size(); ++l) {
    const v1::LaunchSpec& launch = plan_.launches(l);
    const Launch& parsed = launches_[l];
    ConcreteLaunch cl;
    cl.entry = launch.entry();
    cl.line = launch.line();
    for (const auto& [exprs, values, what] :
         {std::make_tuple(&parsed.grid, &cl.grid, "grid"),
          std::make_tuple(&parsed.block, &cl.block, "block")}) {
      for (size_t i = 0; i < exprs->size(); ++i) {
        const Expr& expr = (*exprs)[i];
        const std::string label = absl::StrCat(
            what, " ", std::string(1, kAxes[i]), " = ", expr.text());
        ASSIGN_OR_RETURN((*values)[i],
                         EvalAt(cl.line, label, expr, problem, dims));
        if ((*values)[i] < 1) {
          return LineError(
              cl.line,
              absl::StrCat(label, " is ", (*values)[i], " at ",
                           FormatDims(problem, dims), " (launch ", cl.entry,
                           "); grid and block extents must be >= 1"));
        }
      }
    }
    if (parsed.smem.has_value()) {
      ASSIGN_OR_RETURN(
          cl.smem_bytes,
          EvalAt(cl.line, absl::StrCat("smem(", launch.smem(), ")"),
                 *parsed.smem, problem, dims));
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
      for (const v1::WorkspaceSpec& ws : plan_.workspaces()) {
        cl.args.push_back(ws.name());
      }
    } else {
      cl.args.assign(launch.args().begin(), launch.args().end());
    }
    out.launches.push_back(std::move(cl));
  }
  return out;
}

}  // namespace kbench
