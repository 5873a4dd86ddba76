#include "common/launch_plan.h"

#include <cctype>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/problem_util.h"
#include "common/status_macros.h"

namespace kbench {
namespace {

constexpr char kExampleLaunch[] =
    "// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)";
constexpr char kAxes[] = "xyz";

absl::Status LineError(int line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", what));
}

// The text of one `// @kb` directive and its line.
struct DirectiveCursor {
  absl::string_view rest;  // Unconsumed text.
  int line = 0;

  void SkipSpace() { rest = absl::StripLeadingAsciiWhitespace(rest); }
  bool AtEnd() {
    SkipSpace();
    return rest.empty();
  }
  // Reads a run of non-space characters that are not '('.
  absl::string_view Word() {
    SkipSpace();
    size_t n = 0;
    while (n < rest.size() &&
           !std::isspace(static_cast<unsigned char>(rest[n])) &&
           rest[n] != '(') {
      ++n;
    }
    absl::string_view word = rest.substr(0, n);
    rest.remove_prefix(n);
    return word;
  }
};

// A clause `name(body)` as written.
struct Clause {
  std::string name;
  std::string body;
};

// Reads `name ( balanced-body )`. The cursor is on the clause name.
absl::StatusOr<Clause> ReadClause(DirectiveCursor& cursor,
                                  absl::string_view directive) {
  Clause clause;
  clause.name = std::string(cursor.Word());
  cursor.SkipSpace();
  if (clause.name.empty() || cursor.rest.empty() || cursor.rest[0] != '(') {
    return LineError(
        cursor.line,
        absl::StrCat("expected a clause such as grid(...) in @kb ", directive,
                     " but found '",
                     clause.name.empty() ? cursor.rest : clause.name, "'"));
  }
  int depth = 0;
  size_t i = 0;
  for (; i < cursor.rest.size(); ++i) {
    if (cursor.rest[i] == '(') ++depth;
    if (cursor.rest[i] == ')' && --depth == 0) break;
  }
  if (depth != 0) {
    return LineError(cursor.line,
                     absl::StrCat(clause.name, "(...) has no closing ')'"));
  }
  clause.body = std::string(cursor.rest.substr(1, i - 1));
  cursor.rest.remove_prefix(i + 1);
  return clause;
}

// Splits on commas outside parentheses; trims each part.
std::vector<std::string> SplitTopLevel(absl::string_view body) {
  std::vector<std::string> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= body.size(); ++i) {
    if (i == body.size() || (body[i] == ',' && depth == 0)) {
      parts.push_back(std::string(
          absl::StripAsciiWhitespace(body.substr(start, i - start))));
      start = i + 1;
    } else if (body[i] == '(') {
      ++depth;
    } else if (body[i] == ')') {
      --depth;
    }
  }
  if (parts.size() == 1 && parts[0].empty()) parts.clear();
  return parts;
}

// Checks that `text` parses as an expression; the error names the line.
absl::Status CheckSyntax(int line, absl::string_view clause,
                         absl::string_view text) {
  absl::StatusOr<Expr> expr = Expr::Parse(text);
  if (!expr.ok()) {
    return LineError(line,
                     absl::StrCat(clause, "(): ", expr.status().message()));
  }
  return absl::OkStatus();
}

// Expressions of grid() or block(): 1 to 3, none empty.
absl::StatusOr<std::vector<std::string>> DimsClause(int line,
                                                    const Clause& clause) {
  std::vector<std::string> exprs = SplitTopLevel(clause.body);
  if (exprs.empty() || exprs.size() > 3) {
    return LineError(
        line, absl::StrCat(clause.name, "() takes 1 to 3 expressions, got ",
                           exprs.size()));
  }
  for (size_t i = 0; i < exprs.size(); ++i) {
    if (exprs[i].empty()) {
      return LineError(line, absl::StrCat(clause.name, "() expression ", i + 1,
                                          " is empty"));
    }
    RETURN_IF_ERROR(CheckSyntax(line, clause.name, exprs[i]));
  }
  return exprs;
}

absl::StatusOr<std::string> SingleExprClause(int line, const Clause& clause) {
  std::vector<std::string> exprs = SplitTopLevel(clause.body);
  if (exprs.size() != 1 || exprs[0].empty()) {
    return LineError(
        line, absl::StrCat(clause.name, "() takes exactly 1 expression, got ",
                           exprs.size()));
  }
  RETURN_IF_ERROR(CheckSyntax(line, clause.name, exprs[0]));
  return exprs[0];
}

absl::Status ParseLaunch(DirectiveCursor& cursor, v1::LaunchPlan* plan) {
  v1::LaunchSpec* launch = plan->add_launches();
  launch->set_line(cursor.line);
  const std::string entry(cursor.Word());
  if (!IsIdentifier(entry)) {
    return LineError(
        cursor.line,
        absl::StrCat("@kb launch needs a kernel name (a C identifier) first, "
                     "got '",
                     entry, "'; e.g. `", kExampleLaunch, "`"));
  }
  launch->set_entry(entry);
  std::set<std::string> seen;
  while (!cursor.AtEnd()) {
    ASSIGN_OR_RETURN(Clause clause, ReadClause(cursor, "launch"));
    if (clause.name != "grid" && clause.name != "block" &&
        clause.name != "smem" && clause.name != "args") {
      return LineError(cursor.line,
                       absl::StrCat("unknown clause '", clause.name,
                                    "(...)' in @kb launch; expected grid(), "
                                    "block(), smem() or args()"));
    }
    if (!seen.insert(clause.name).second) {
      return LineError(cursor.line,
                       absl::StrCat(clause.name, "() appears more than once"));
    }
    if (clause.name == "grid" || clause.name == "block") {
      ASSIGN_OR_RETURN(std::vector<std::string> exprs,
                       DimsClause(cursor.line, clause));
      for (std::string& e : exprs) {
        if (clause.name == "grid") {
          launch->add_grid(std::move(e));
        } else {
          launch->add_block(std::move(e));
        }
      }
    } else if (clause.name == "smem") {
      ASSIGN_OR_RETURN(std::string e, SingleExprClause(cursor.line, clause));
      launch->set_smem(std::move(e));
    } else {
      std::vector<std::string> names = SplitTopLevel(clause.body);
      if (names.empty()) {
        return LineError(cursor.line,
                         "args() lists no names; leave it out to pass the "
                         "problem's signature followed by every workspace");
      }
      for (std::string& name : names) {
        if (!IsIdentifier(name)) {
          return LineError(
              cursor.line,
              absl::StrCat("args() takes names of tensors, dims and "
                           "workspaces; '",
                           name, "' is not a name"));
        }
        launch->add_args(std::move(name));
      }
    }
  }
  for (const char* required : {"grid", "block"}) {
    if (seen.count(required) == 0) {
      return LineError(cursor.line,
                       absl::StrCat("@kb launch ", entry, " has no ", required,
                                    "(); grid() and block() are required, "
                                    "e.g. `",
                                    kExampleLaunch, "`"));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseWorkspace(DirectiveCursor& cursor, v1::LaunchPlan* plan) {
  const std::string name(cursor.Word());
  if (!IsIdentifier(name)) {
    return LineError(cursor.line,
                     absl::StrCat("@kb workspace needs a name (an identifier) "
                                  "first, got '",
                                  name,
                                  "'; e.g. `// @kb workspace partial "
                                  "bytes(B * K * 4)`"));
  }
  v1::WorkspaceSpec* workspace = plan->add_workspaces();
  workspace->set_name(name);
  workspace->set_line(cursor.line);
  bool has_bytes = false;
  while (!cursor.AtEnd()) {
    ASSIGN_OR_RETURN(Clause clause, ReadClause(cursor, "workspace"));
    if (clause.name != "bytes") {
      return LineError(cursor.line,
                       absl::StrCat("unknown clause '", clause.name,
                                    "(...)' in @kb workspace; expected "
                                    "bytes()"));
    }
    if (has_bytes) {
      return LineError(cursor.line, "bytes() appears more than once");
    }
    has_bytes = true;
    ASSIGN_OR_RETURN(std::string e, SingleExprClause(cursor.line, clause));
    workspace->set_bytes(std::move(e));
  }
  if (!has_bytes) {
    return LineError(cursor.line,
                     absl::StrCat("@kb workspace ", name,
                                  " has no bytes(); e.g. `// @kb workspace ",
                                  name, " bytes(B * K * 4)`"));
  }
  return absl::OkStatus();
}

absl::Status ParseProblemLine(DirectiveCursor& cursor, v1::LaunchPlan* plan,
                              int* problem_line) {
  const std::string name(cursor.Word());
  if (name.empty() || !cursor.AtEnd()) {
    return LineError(cursor.line,
                     "@kb problem takes exactly one problem name, e.g. "
                     "`// @kb problem gather_linear_fp32`");
  }
  if (*problem_line != 0) {
    return LineError(cursor.line,
                     absl::StrCat("second @kb problem line; the first is on "
                                  "line ",
                                  *problem_line));
  }
  *problem_line = cursor.line;
  plan->set_problem(name);
  return absl::OkStatus();
}

// When `line` is a `// @kb` comment, returns true and leaves the text after
// "@kb" in `rest`.
bool MatchDirective(absl::string_view line, absl::string_view* rest) {
  line = absl::StripLeadingAsciiWhitespace(line);
  if (!absl::ConsumePrefix(&line, "//")) return false;
  line = absl::StripLeadingAsciiWhitespace(line);
  if (!absl::ConsumePrefix(&line, "@kb")) return false;
  if (!line.empty() && !std::isspace(static_cast<unsigned char>(line[0]))) {
    return false;  // "@kbfoo" is some other tag.
  }
  *rest = line;
  return true;
}

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

absl::StatusOr<v1::LaunchPlan> ParseLaunchPlan(absl::string_view source) {
  v1::LaunchPlan plan;
  int line_number = 0;
  int problem_line = 0;
  for (absl::string_view line : absl::StrSplit(source, '\n')) {
    ++line_number;
    absl::ConsumeSuffix(&line, "\r");
    absl::string_view rest;
    if (!MatchDirective(line, &rest)) continue;
    DirectiveCursor cursor{rest, line_number};
    const std::string directive(cursor.Word());
    if (directive == "launch") {
      RETURN_IF_ERROR(ParseLaunch(cursor, &plan));
    } else if (directive == "workspace") {
      RETURN_IF_ERROR(ParseWorkspace(cursor, &plan));
    } else if (directive == "problem") {
      RETURN_IF_ERROR(ParseProblemLine(cursor, &plan, &problem_line));
    } else if (directive.empty()) {
      return LineError(line_number,
                       "empty @kb directive; expected launch, workspace or "
                       "problem");
    } else {
      return LineError(line_number,
                       absl::StrCat("unknown @kb directive '", directive,
                                    "'; expected launch, workspace or "
                                    "problem"));
    }
  }
  if (plan.launches().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the source declares no kernel launch; add one `// @kb launch` line "
        "per kernel launch, in order, e.g. `",
        kExampleLaunch, "` (see docs/kernel-contract.md)"));
  }
  return plan;
}

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
