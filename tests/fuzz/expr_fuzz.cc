// Fuzz target: the integer expressions of `// @kb` lines and problem files
// (Expr::Parse, Expr::Eval, Expr::Names). Input: the expression, then
// optionally a newline and `name=value` pairs separated by spaces, the dims
// to evaluate at (e.g. "cdiv(K, 256) * B\nB=12 K=56"); values that are not
// 64-bit integers are skipped.
//
// Invariants beyond "no crash, leak or UB" (UBSan catches a signed overflow
// the evaluator missed): Parse keeps the text; Names() is sorted, unique
// and made of identifiers; Eval succeeds only when every name has a value,
// and gives the same answer twice and after re-parsing its own text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "contract/expr.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kbench::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using kbench::fuzz::Fail;
  const absl::string_view input = kbench::fuzz::AsText(data, size);
  const size_t nl = input.find('\n');
  const absl::string_view text = input.substr(0, nl);
  kbench::DimValues dims;
  if (nl != absl::string_view::npos) {
    for (absl::string_view pair :
         absl::StrSplit(input.substr(nl + 1), ' ', absl::SkipEmpty())) {
      std::pair<std::string, std::string> kv = absl::StrSplit(pair, '=');
      int64_t value = 0;
      if (absl::SimpleAtoi(kv.second, &value)) dims[kv.first] = value;
    }
  }

  absl::StatusOr<kbench::Expr> expr = kbench::Expr::Parse(text);
  if (!expr.ok()) {
    if (expr.status().code() != absl::StatusCode::kInvalidArgument) {
      Fail("Parse failed with a code other than InvalidArgument",
           expr.status().ToString());
    }
    return 0;
  }
  if (expr->text() != text) Fail("Parse did not keep the text", text);
  const std::vector<std::string> names = expr->Names();
  bool all_known = true;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!kbench::IsIdentifier(names[i])) Fail("a name is no identifier", text);
    if (i > 0 && !(names[i - 1] < names[i])) {
      Fail("Names() is not sorted and unique", text);
    }
    all_known = all_known && dims.count(names[i]) > 0;
  }
  absl::StatusOr<int64_t> value = expr->Eval(dims);
  if (value.ok() && !all_known) Fail("Eval ignored an unknown name", text);
  absl::StatusOr<int64_t> again = expr->Eval(dims);
  if (value.ok() != again.ok() || (value.ok() && *value != *again)) {
    Fail("Eval is not deterministic", text);
  }
  absl::StatusOr<int64_t> reparsed = kbench::EvalExpr(expr->text(), dims);
  if (value.ok() != reparsed.ok() || (value.ok() && *value != *reparsed)) {
    Fail("EvalExpr(text()) differs from Eval", text);
  }
  if (!value.ok() &&
      value.status().code() != absl::StatusCode::kInvalidArgument) {
    Fail("Eval failed with a code other than InvalidArgument",
         value.status().ToString());
  }
  return 0;
}
