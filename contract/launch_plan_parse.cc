// ParseLaunchPlan (declared in contract/launch_plan.h): reads the `// @kb`
// lines of a kernel source into a v1::LaunchPlan. Validation against a
// problem, resolution and device limits are in contract/launch_plan.cc.
#include <cctype>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "contract/expr.h"
#include "contract/launch_plan.h"
#include "contract/launch_plan_internal.h"

namespace kbench {
namespace {

using internal::kExampleLaunch;
using internal::LineError;

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
        if (IsIdentifier(name)) {
          launch->add_args(std::move(name));
          continue;
        }
        ASSIGN_OR_RETURN(const std::optional<internal::PeerArg> peer,
                         internal::ParsePeerArg(cursor.line, name));
        if (!peer.has_value()) {
          return LineError(
              cursor.line,
              absl::StrCat("args() takes names of tensors, dims and "
                           "workspaces (or peer(NAME, RANK) on a problem "
                           "that spans GPUs); '",
                           name, "' is not a name"));
        }
        RETURN_IF_ERROR(CheckSyntax(cursor.line, "peer", peer->rank));
        launch->add_args(internal::PeerArgText(*peer));
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

}  // namespace kbench
