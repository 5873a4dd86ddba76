#include "contract/parsed_plan.h"

#include <map>
#include <optional>
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

// Parses `text` and checks that it uses only the problem's dims (and, in
// a problem that spans GPUs, `rank` and `world_size`).
absl::StatusOr<Expr> ParseDimExpr(int line, absl::string_view what,
                                  absl::string_view text,
                                  const v1::Problem& problem) {
  if (text.empty()) return LineError(line, absl::StrCat(what, " is empty"));
  absl::StatusOr<Expr> expr = Expr::Parse(text);
  if (!expr.ok()) {
    return LineError(line, absl::StrCat(what, ": ", expr.status().message()));
  }
  const bool ranked = SpansGpus(problem);
  for (const std::string& name : expr->Names()) {
    if (IsLaunchDim(problem, name)) continue;
    std::vector<std::string> dims;
    for (const v1::DimSpec& d : problem.dims()) dims.push_back(d.name());
    std::string why = absl::StrCat(what, " '", text, "' uses '", name,
                                   "', which is not a dim of ", problem.name(),
                                   "; expressions may use only the dims ",
                                   absl::StrJoin(dims, ", "));
    if (ranked) absl::StrAppend(&why, ", rank and world_size");
    if (!ranked && (name == kRankDim || name == kWorldSizeDim)) {
      absl::StrAppend(&why, " (", name,
                      " is for problems that span GPUs; this one runs on one)");
    }
    return LineError(line, why);
  }
  return expr;
}

// Checks a `peer(NAME, RANK)` entry of args() and parses its RANK.
absl::StatusOr<Expr> ParsePeer(int line, const internal::PeerArg& peer,
                               const v1::LaunchPlan& plan,
                               const v1::Problem& problem) {
  const std::string entry = internal::PeerArgText(peer);
  if (!SpansGpus(problem)) {
    return LineError(
        line, absl::StrCat("args() entry '", entry, "': ", problem.name(),
                           " runs on one GPU, so there is no peer to name; "
                           "pass '",
                           peer.name, "' itself"));
  }
  bool workspace = false;
  for (const v1::WorkspaceSpec& ws : plan.workspaces()) {
    workspace |= ws.name() == peer.name;
  }
  bool in_signature = false;
  for (const std::string& name : problem.signature()) {
    in_signature |= name == peer.name;
  }
  const v1::TensorSpec* tensor =
      in_signature ? FindTensor(problem, peer.name) : nullptr;
  if (!workspace && tensor == nullptr) {
    return LineError(
        line, absl::StrCat("args() entry '", entry, "' names '", peer.name,
                           "', which is not a tensor or workspace; peer() "
                           "takes a tensor every rank holds or a workspace"));
  }
  if (tensor != nullptr && tensor->placement() != v1::PLACEMENT_PER_RANK &&
      tensor->placement() != v1::PLACEMENT_REPLICATED) {
    return LineError(
        line, absl::StrCat("args() entry '", entry, "': '", peer.name,
                           "' lives on rank 0 only (PLACEMENT_RANK0); peer() "
                           "takes a tensor every rank holds (per rank or "
                           "replicated) or a workspace"));
  }
  return ParseDimExpr(line, absl::StrCat("args() entry '", entry, "' rank"),
                      peer.rank, problem);
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
      ASSIGN_OR_RETURN(const std::optional<internal::PeerArg> peer,
                       internal::ParsePeerArg(line, arg));
      if (peer.has_value()) {
        ASSIGN_OR_RETURN(Expr rank, ParsePeer(line, *peer, plan, problem));
        pl.peers.push_back(std::move(rank));
        pl.arg_names.push_back(peer->name);
        continue;
      }
      pl.peers.push_back(std::nullopt);
      pl.arg_names.push_back(arg);
      bool is_tensor = false;
      for (const std::string& name : problem.signature()) {
        is_tensor |= name == arg && FindTensor(problem, name) != nullptr;
      }
      if (!is_tensor && !IsLaunchDim(problem, arg) &&
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
      cl.arg_peers.assign(cl.args.size(), -1);
    } else {
      cl.args = parsed.arg_names;
      for (size_t a = 0; a < parsed.peers.size(); ++a) {
        if (!parsed.peers[a].has_value()) {
          cl.arg_peers.push_back(-1);
          continue;
        }
        const std::string label =
            absl::StrCat("args() entry '", launch.args(a), "' rank");
        ASSIGN_OR_RETURN(
            const int64_t rank,
            EvalAt(cl.line, label, *parsed.peers[a], problem, dims));
        if (rank < 0 || rank >= problem.world_size()) {
          return LineError(
              cl.line,
              absl::StrCat(label, " is ", rank, " at ",
                           FormatDims(problem, dims), "; a rank is 0 to ",
                           problem.world_size() - 1,
                           " (world_size - 1): use % world_size to wrap"));
        }
        cl.arg_peers.push_back(static_cast<int>(rank));
      }
    }
    out.launches.push_back(std::move(cl));
  }
  return out;
}

}  // namespace kbench
