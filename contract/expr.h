// Integer expressions over a problem's dims, as written in `// @kb` lines and
// in problem files: integer literals, dim names, + - * / %, unary minus,
// parentheses, and the functions cdiv(a, b), min(a, b, ...) and
// max(a, b, ...). Arithmetic is 64-bit signed; overflow, division by zero and
// unknown names are errors. / and % truncate toward zero (as in C).
//
// Thread safety: an Expr is immutable after Parse and may be shared.
#ifndef KBENCH_CONTRACT_EXPR_H_
#define KBENCH_CONTRACT_EXPR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kbench {

// Values of the problem's dims, by name.
using DimValues = std::map<std::string, int64_t>;

class Expr {
 public:
  // The longest expression parsed. Expressions are parsed again at every
  // evaluation, per shape and tensor; a 200 KB `min(C, C, ...)` in a
  // problem file (not deep, so the depth limit let it through) held kbd's
  // start for 12 minutes (review, 2026-12-05). No real extent, grid or
  // formula comes near this.
  static constexpr size_t kMaxBytes = 4096;

  // Parses `text`. Errors are InvalidArgument with the offending column,
  // e.g. "expected ')' at column 9 in 'cdiv(K, 128'".
  static absl::StatusOr<Expr> Parse(absl::string_view text);

  // Evaluates with `dims`. Errors: InvalidArgument for an unknown name,
  // division by zero or overflow, naming the expression.
  absl::StatusOr<int64_t> Eval(const DimValues& dims) const;

  // The text as parsed.
  const std::string& text() const { return text_; }

  // Names the expression refers to, sorted and unique.
  std::vector<std::string> Names() const;

  struct Node;  // Defined in expr.cc.

 private:
  Expr(std::string text, std::shared_ptr<const Node> root)
      : text_(std::move(text)), root_(std::move(root)) {}
  std::string text_;
  std::shared_ptr<const Node> root_;
};

// True for a C identifier ([A-Za-z_][A-Za-z0-9_]*): the names of dims,
// tensors, workspaces and entry points.
bool IsIdentifier(absl::string_view s);

// Parse and evaluate in one step.
absl::StatusOr<int64_t> EvalExpr(absl::string_view text, const DimValues& dims);

}  // namespace kbench

#endif  // KBENCH_CONTRACT_EXPR_H_
