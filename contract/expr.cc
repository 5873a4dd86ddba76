#include "contract/expr.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/untrusted_input.h"

namespace kbench {

// A node of the syntax tree. `column` is 1-based in the expression text.
struct Expr::Node {
  enum class Kind { kNumber, kName, kNegate, kBinary, kCall };
  Kind kind = Kind::kNumber;
  int64_t value = 0;  // kNumber.
  std::string name;   // kName: the dim; kCall: the function.
  char op = 0;        // kBinary: one of + - * / %.
  std::vector<std::shared_ptr<const Node>> children;
  int column = 1;
};

namespace {

// An expression as quoted in a message: its first 120 bytes, so a 256 KiB
// expression does not make a 256 KiB error, never cut inside a UTF-8
// character, and bytes that are no character shown as U+FFFD (a message
// goes into proto3 strings, which must be UTF-8).
std::string Excerpt(absl::string_view text) {
  if (text.size() <= 120) return ScrubUtf8(text);
  return absl::StrCat(ScrubUtf8(Utf8Prefix(text, 120)), "... (", text.size(),
                      " chars)");
}

using Node = Expr::Node;
using NodePtr = std::shared_ptr<const Node>;

// Deeper recursion than this (about 64 levels of parentheses) is rejected,
// so that a hostile expression cannot exhaust the stack.
constexpr int kMaxDepth = 256;

bool IsIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Recursive-descent parser over the grammar
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/' | '%') unary)*
//   unary   := '-' unary | primary
//   primary := NUMBER | NAME | NAME '(' expr (',' expr)* ')' | '(' expr ')'
class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<NodePtr> ParseAll() {
    ASSIGN_OR_RETURN(NodePtr root, ParseExpr(0));
    SkipSpace();
    if (pos_ < text_.size()) {
      return Error(absl::StrCat("unexpected ", Describe()),
                   "; expected an operator (+ - * / %) or the end");
    }
    return root;
  }

 private:
  void SkipSpace() {
    while (pos_ < text_.size() &&
           std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }

  // Column of the next unread character (1-based).
  int Column() const { return static_cast<int>(pos_) + 1; }

  // The next token, for messages: a name, one character (all of a UTF-8
  // one: an LLM writes 'R×2'), or a byte that is no character, in hex.
  std::string Describe() const {
    if (pos_ >= text_.size()) return "end of expression";
    size_t end = pos_ + 1;
    if (IsIdentChar(text_[pos_])) {
      while (end < text_.size() && IsIdentChar(text_[end])) ++end;
    } else if (static_cast<unsigned char>(text_[pos_]) >= 0x80) {
      while (end < text_.size() &&
             (static_cast<unsigned char>(text_[end]) & 0xC0) == 0x80) {
        ++end;
      }
      if (!IsValidUtf8(text_.substr(pos_, end - pos_))) {
        return absl::StrFormat("byte 0x%02X",
                               static_cast<unsigned char>(text_[pos_]));
      }
    }
    return absl::StrCat("'", text_.substr(pos_, end - pos_), "'");
  }

  // "<what> at column C in '<text>'<hint>".
  absl::Status Error(absl::string_view what,
                     absl::string_view hint = "") const {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " at column ", Column(), " in '", Excerpt(text_), "'", hint));
  }

  absl::Status CheckDepth(int depth) const {
    if (depth > kMaxDepth) {
      return Error("expression nested too deeply");
    }
    return absl::OkStatus();
  }

  absl::StatusOr<NodePtr> ParseExpr(int depth) {
    return ParseLeftAssoc(depth, "+-", &Parser::ParseTerm);
  }

  absl::StatusOr<NodePtr> ParseTerm(int depth) {
    return ParseLeftAssoc(depth, "*/%", &Parser::ParseUnary);
  }

  // One precedence level: operand (op operand)*, left associative.
  absl::StatusOr<NodePtr> ParseLeftAssoc(
      int depth, absl::string_view ops,
      absl::StatusOr<NodePtr> (Parser::*operand)(int)) {
    RETURN_IF_ERROR(CheckDepth(depth));
    ASSIGN_OR_RETURN(NodePtr lhs, (this->*operand)(depth + 1));
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || !absl::StrContains(ops, text_[pos_])) {
        return lhs;
      }
      // Each operator of a chain (1+1+...+1) nests the tree one level, and
      // Eval, Names and the destructor recurse once per level.
      RETURN_IF_ERROR(CheckDepth(++depth));
      auto node = std::make_shared<Node>();
      node->kind = Node::Kind::kBinary;
      node->op = text_[pos_];
      node->column = Column();
      ++pos_;
      ASSIGN_OR_RETURN(NodePtr rhs, (this->*operand)(depth + 1));
      node->children = {std::move(lhs), std::move(rhs)};
      lhs = std::move(node);
    }
  }

  absl::StatusOr<NodePtr> ParseUnary(int depth) {
    RETURN_IF_ERROR(CheckDepth(depth));
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '-') {
      auto node = std::make_shared<Node>();
      node->kind = Node::Kind::kNegate;
      node->column = Column();
      ++pos_;
      ASSIGN_OR_RETURN(NodePtr operand, ParseUnary(depth + 1));
      node->children = {std::move(operand)};
      return NodePtr(std::move(node));
    }
    return ParsePrimary(depth + 1);
  }

  absl::StatusOr<NodePtr> ParsePrimary(int depth) {
    RETURN_IF_ERROR(CheckDepth(depth));
    SkipSpace();
    if (pos_ >= text_.size()) {
      return Error("unexpected end of expression",
                   "; expected a number, a name or '('");
    }
    const char c = text_[pos_];
    auto node = std::make_shared<Node>();
    node->column = Column();
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t value = 0;
      while (pos_ < text_.size() &&
             std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        if (__builtin_mul_overflow(value, 10, &value) ||
            __builtin_add_overflow(value, text_[pos_] - '0', &value)) {
          pos_ = node->column - 1;
          return Error("integer literal does not fit in 64 bits");
        }
        ++pos_;
      }
      node->kind = Node::Kind::kNumber;
      node->value = value;
      return NodePtr(std::move(node));
    }
    if (IsIdentStart(c)) {
      const size_t start = pos_;
      while (pos_ < text_.size() && IsIdentChar(text_[pos_])) ++pos_;
      node->name = std::string(text_.substr(start, pos_ - start));
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '(') {
        node->kind = Node::Kind::kName;
        return NodePtr(std::move(node));
      }
      return ParseCall(std::move(node), depth + 1);
    }
    if (c == '(') {
      ++pos_;
      ASSIGN_OR_RETURN(NodePtr inner, ParseExpr(depth + 1));
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ')') {
        return Error(absl::StrCat("expected ')' but found ", Describe()));
      }
      ++pos_;
      return inner;
    }
    return Error(absl::StrCat("unexpected ", Describe()),
                 "; expected a number, a name, '(' or '-'");
  }

  // Called with pos_ on the '(' after the function name.
  absl::StatusOr<NodePtr> ParseCall(std::shared_ptr<Node> node, int depth) {
    const std::string& fn = node->name;
    if (fn != "cdiv" && fn != "min" && fn != "max") {
      const size_t saved = pos_;
      pos_ = node->column - 1;
      absl::Status status = Error(absl::StrCat("unknown function '", fn, "'"),
                                  "; functions are cdiv(a, b), min(a, b, ...) "
                                  "and max(a, b, ...)");
      pos_ = saved;
      return status;
    }
    ++pos_;  // '('
    while (true) {
      ASSIGN_OR_RETURN(NodePtr arg, ParseExpr(depth + 1));
      node->children.push_back(std::move(arg));
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ')') {
        ++pos_;
        break;
      }
      return Error(absl::StrCat("expected ',' or ')' but found ", Describe()));
    }
    const size_t n = node->children.size();
    if (fn == "cdiv" && n != 2) {
      pos_ = node->column - 1;
      return Error(absl::StrCat("cdiv() takes exactly 2 arguments, got ", n));
    }
    if ((fn == "min" || fn == "max") && n < 2) {
      pos_ = node->column - 1;
      return Error(absl::StrCat(fn, "() takes at least 2 arguments, got ", n));
    }
    node->kind = Node::Kind::kCall;
    return NodePtr(std::move(node));
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

class Evaluator {
 public:
  Evaluator(const std::string& text, const DimValues& dims)
      : text_(text), dims_(dims) {}

  absl::StatusOr<int64_t> Eval(const Node& node) const {
    switch (node.kind) {
      case Node::Kind::kNumber:
        return node.value;
      case Node::Kind::kName: {
        auto it = dims_.find(node.name);
        if (it == dims_.end()) {
          std::vector<std::string> known;
          for (const auto& [name, value] : dims_) known.push_back(name);
          return Error(
              node, absl::StrCat("unknown name '", node.name, "'"),
              absl::StrCat("; known names: ",
                           known.empty() ? std::string("(none)")
                                         : absl::StrJoin(known, ", ")));
        }
        return it->second;
      }
      case Node::Kind::kNegate: {
        ASSIGN_OR_RETURN(int64_t v, Eval(*node.children[0]));
        int64_t result;
        if (__builtin_sub_overflow(int64_t{0}, v, &result)) {
          return Error(node, absl::StrCat("overflow: -(", v,
                                          ") does not fit in 64 bits"));
        }
        return result;
      }
      case Node::Kind::kBinary:
        return EvalBinary(node);
      case Node::Kind::kCall:
        return EvalCall(node);
    }
    return Error(node, "internal error: bad node");
  }

 private:
  // "<what> at column C in '<text>'<hint>".
  absl::Status Error(const Node& node, absl::string_view what,
                     absl::string_view hint = "") const {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " at column ", node.column, " in '", Excerpt(text_), "'", hint));
  }

  absl::StatusOr<int64_t> EvalBinary(const Node& node) const {
    ASSIGN_OR_RETURN(int64_t a, Eval(*node.children[0]));
    ASSIGN_OR_RETURN(int64_t b, Eval(*node.children[1]));
    int64_t result = 0;
    bool overflow = false;
    switch (node.op) {
      case '+':
        overflow = __builtin_add_overflow(a, b, &result);
        break;
      case '-':
        overflow = __builtin_sub_overflow(a, b, &result);
        break;
      case '*':
        overflow = __builtin_mul_overflow(a, b, &result);
        break;
      case '/':
      case '%':
        if (b == 0) {
          return Error(node, absl::StrCat("division by zero (", a, " ",
                                          std::string(1, node.op), " 0)"));
        }
        if (a == INT64_MIN && b == -1) {
          if (node.op == '%') return int64_t{0};
          overflow = true;
          break;
        }
        result = node.op == '/' ? a / b : a % b;
        break;
      default:
        return Error(node, "internal error: bad operator");
    }
    if (overflow) {
      return Error(
          node, absl::StrCat("overflow: ", a, " ", std::string(1, node.op), " ",
                             b, " does not fit in 64 bits"));
    }
    return result;
  }

  absl::StatusOr<int64_t> EvalCall(const Node& node) const {
    std::vector<int64_t> args;
    for (const NodePtr& child : node.children) {
      ASSIGN_OR_RETURN(int64_t v, Eval(*child));
      args.push_back(v);
    }
    if (node.name == "cdiv") {
      const int64_t a = args[0], b = args[1];
      if (b <= 0) {
        return Error(node, absl::StrCat("cdiv(", a, ", ", b,
                                        "): the divisor must be positive"));
      }
      // Ceiling for a > 0; truncation already rounds up for a <= 0.
      return a / b + ((a % b) > 0 ? 1 : 0);
    }
    int64_t result = args[0];
    for (int64_t v : args) {
      result = node.name == "min" ? std::min(result, v) : std::max(result, v);
    }
    return result;
  }

  const std::string& text_;
  const DimValues& dims_;
};

void CollectNames(const Node& node, std::set<std::string>* names) {
  if (node.kind == Node::Kind::kName) names->insert(node.name);
  for (const NodePtr& child : node.children) CollectNames(*child, names);
}

}  // namespace

bool IsIdentifier(absl::string_view s) {
  if (s.empty() || !IsIdentStart(s[0])) return false;
  for (char c : s) {
    if (!IsIdentChar(c)) return false;
  }
  return true;
}

absl::StatusOr<Expr> Expr::Parse(absl::string_view text) {
  if (text.size() > kMaxBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the expression '", Excerpt(text), "' is ", text.size(),
                     " bytes; at most ", kMaxBytes, " are parsed"));
  }
  Parser parser(text);
  ASSIGN_OR_RETURN(NodePtr root, parser.ParseAll());
  return Expr(std::string(text), std::move(root));
}

absl::StatusOr<int64_t> Expr::Eval(const DimValues& dims) const {
  return Evaluator(text_, dims).Eval(*root_);
}

std::vector<std::string> Expr::Names() const {
  std::set<std::string> names;
  CollectNames(*root_, &names);
  return std::vector<std::string>(names.begin(), names.end());
}

absl::StatusOr<int64_t> EvalExpr(absl::string_view text,
                                 const DimValues& dims) {
  ASSIGN_OR_RETURN(Expr expr, Expr::Parse(text));
  return expr.Eval(dims);
}

}  // namespace kbench
