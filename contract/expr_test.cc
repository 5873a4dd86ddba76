#include "contract/expr.h"

#include <cstdint>
#include <string>

#include "base/untrusted_input.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const DimValues kDims = {{"R", 4}, {"B", 12}, {"H", 32}, {"K", 56}};

int64_t Eval(const std::string& text, const DimValues& dims = kDims) {
  absl::StatusOr<int64_t> v = EvalExpr(text, dims);
  EXPECT_TRUE(v.ok()) << text << ": " << v.status();
  return v.ok() ? *v : -999999;
}

std::string EvalError(const std::string& text, const DimValues& dims = kDims) {
  absl::StatusOr<int64_t> v = EvalExpr(text, dims);
  EXPECT_FALSE(v.ok()) << text << " gave " << (v.ok() ? *v : 0);
  if (v.ok()) return "";
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(v.status().message());
}

// Found by the fuzzer: a long chain (1+1+...+1) built a tree as deep as
// it was long, and evaluating 20,000 terms overflowed the stack.
TEST(ExprTest, LongChainsAreRefusedNotOverflowed) {
  std::string chain = "1";
  for (int i = 0; i < 99; ++i) chain += "+1";
  EXPECT_EQ(Eval(chain), 100);
  for (int terms : {300, 2000, 100000}) {
    std::string long_chain = "1";
    for (int i = 1; i < terms; ++i) long_chain += "+1";
    const std::string error = EvalError(long_chain);
    EXPECT_THAT(error, HasSubstr(terms * 2 - 1 > 4096 ? "at most 4096"
                                                      : "nested too deeply"));
    EXPECT_LT(error.size(), 400u);  // The message quotes an excerpt.
  }
}

// Not deep, only long: refused by length before it is parsed (it would be
// parsed again at every evaluation).
TEST(ExprTest, LongFlatExpressionsAreRefused) {
  std::string args = "min(C";
  for (int i = 0; i < 2000; ++i) args += ", C";
  args += ")";
  EXPECT_THAT(EvalError(args, {{"C", 3}}),
              AllOf(HasSubstr("6006 bytes"), HasSubstr("at most 4096")));
}

TEST(ExprTest, Literals) {
  EXPECT_EQ(Eval("0"), 0);
  EXPECT_EQ(Eval("42"), 42);
  EXPECT_EQ(Eval("9223372036854775807"), INT64_MAX);
}

TEST(ExprTest, Names) {
  EXPECT_EQ(Eval("R"), 4);
  EXPECT_EQ(Eval("K"), 56);
  EXPECT_EQ(Eval("B*K*4"), 12 * 56 * 4);
}

TEST(ExprTest, Precedence) {
  EXPECT_EQ(Eval("2 + 3 * 4"), 14);
  EXPECT_EQ(Eval("2 * 3 + 4"), 10);
  EXPECT_EQ(Eval("(2 + 3) * 4"), 20);
  EXPECT_EQ(Eval("10 - 4 / 2"), 8);
  EXPECT_EQ(Eval("10 - 7 % 4"), 7);
  EXPECT_EQ(Eval("R*H + K"), 4 * 32 + 56);
}

TEST(ExprTest, LeftAssociativity) {
  EXPECT_EQ(Eval("10 - 3 - 2"), 5);
  EXPECT_EQ(Eval("100 / 10 / 5"), 2);
  EXPECT_EQ(Eval("100 / 10 * 5"), 50);
  EXPECT_EQ(Eval("17 % 10 % 4"), 3);
}

TEST(ExprTest, TruncatesTowardZero) {
  EXPECT_EQ(Eval("7 / 2"), 3);
  EXPECT_EQ(Eval("-7 / 2"), -3);
  EXPECT_EQ(Eval("-7 % 2"), -1);
  EXPECT_EQ(Eval("7 % -2"), 1);
}

TEST(ExprTest, UnaryMinus) {
  EXPECT_EQ(Eval("-5"), -5);
  EXPECT_EQ(Eval("--5"), 5);
  EXPECT_EQ(Eval("-K + 60"), 4);
  EXPECT_EQ(Eval("2 * -3"), -6);
  EXPECT_EQ(Eval("-(2 + 3) * 2"), -10);
  EXPECT_EQ(Eval("1 - -1"), 2);
}

TEST(ExprTest, Functions) {
  EXPECT_EQ(Eval("cdiv(K, 256)"), 1);
  EXPECT_EQ(Eval("cdiv(1000, 256)"), 4);
  EXPECT_EQ(Eval("cdiv(1024, 256)"), 4);
  EXPECT_EQ(Eval("cdiv(1025, 256)"), 5);
  EXPECT_EQ(Eval("cdiv(0, 8)"), 0);
  EXPECT_EQ(Eval("cdiv(-7, 2)"), -3);
  EXPECT_EQ(Eval("cdiv(9223372036854775807, 2)"), 4611686018427387904);
  EXPECT_EQ(Eval("min(H, 256)"), 32);
  EXPECT_EQ(Eval("min(5, 3, 9)"), 3);
  EXPECT_EQ(Eval("max(5, 3, 9, -1)"), 9);
  EXPECT_EQ(Eval("max(R*H, K) + 1"), 129);
  EXPECT_EQ(Eval("cdiv(max(B, 2), min(4, 3))"), 4);
}

TEST(ExprTest, Whitespace) {
  EXPECT_EQ(Eval("  cdiv ( K ,\t256 ) "), 1);
  EXPECT_EQ(Eval("B*R*H*4"), Eval(" B * R * H * 4 "));
  EXPECT_EQ(Eval("- 3"), -3);
}

TEST(ExprTest, OverflowIsAnError) {
  EXPECT_THAT(
      EvalError("9223372036854775807 + 1"),
      AllOf(HasSubstr("overflow"), HasSubstr("'9223372036854775807 + 1'")));
  EXPECT_THAT(EvalError("4611686018427387904 * 2"), HasSubstr("overflow"));
  EXPECT_THAT(EvalError("-9223372036854775807 - 2"), HasSubstr("overflow"));
  EXPECT_THAT(EvalError("(-9223372036854775807 - 1) / -1"),
              HasSubstr("overflow"));
  EXPECT_THAT(EvalError("-(-9223372036854775807 - 1)"), HasSubstr("overflow"));
  EXPECT_THAT(EvalError("B*K*H*R*B*K*H*R*B*K*H*R*B*K*H*R"),
              HasSubstr("overflow"));
  EXPECT_THAT(
      EvalError("99999999999999999999"),
      AllOf(HasSubstr("does not fit in 64 bits"), HasSubstr("column 1")));
}

TEST(ExprTest, DivisionByZero) {
  EXPECT_THAT(EvalError("K / 0"),
              AllOf(HasSubstr("division by zero"), HasSubstr("column 3"),
                    HasSubstr("'K / 0'")));
  EXPECT_THAT(EvalError("K % (R - 4)"), HasSubstr("division by zero"));
  EXPECT_THAT(EvalError("cdiv(K, 0)"),
              AllOf(HasSubstr("cdiv(56, 0)"), HasSubstr("must be positive")));
  EXPECT_THAT(EvalError("cdiv(K, -2)"), HasSubstr("must be positive"));
}

TEST(ExprTest, UnknownName) {
  EXPECT_THAT(EvalError("cdiv(N, 2)"),
              AllOf(HasSubstr("unknown name 'N'"), HasSubstr("column 6"),
                    HasSubstr("'cdiv(N, 2)'"), HasSubstr("B, H, K, R")));
}

// A message quotes the expression: it must stay UTF-8 (it goes into proto3
// strings and the store), whatever the expression holds and wherever the
// excerpt is cut.
TEST(ExprTest, MessagesAreUtf8AndNameTheCharacter) {
  const std::string times =
      "R\xc3\x97"
      "1";  // "R×1", as an LLM writes it.
  std::string message = EvalError(times);
  EXPECT_TRUE(IsValidUtf8(message)) << message;
  EXPECT_THAT(message, HasSubstr("unexpected '\xc3\x97' at column 2"));
  // A byte that is no character is named in hex.
  message = EvalError(
      "R\xff"
      "1");
  EXPECT_TRUE(IsValidUtf8(message)) << message;
  EXPECT_THAT(message, HasSubstr("unexpected byte 0xFF at column 2"));
  // The excerpt (120 bytes) ends before a character it would cut.
  const std::string cut = std::string(119, 'R') + "\xc3\xa9";
  message = EvalError(cut);
  EXPECT_TRUE(IsValidUtf8(message)) << message;
  EXPECT_THAT(message, HasSubstr("... (121 chars)"));
}

TEST(ExprTest, MalformedInputReportsColumn) {
  struct Case {
    std::string text;
    std::string want;
  };
  const Case cases[] = {
      {"", "unexpected end of expression at column 1"},
      {"   ", "at column 4"},
      {"cdiv(K, 128",
       "expected ',' or ')' but found end of expression at "
       "column 12 in 'cdiv(K, 128'"},
      {"(1 + 2", "expected ')' but found end of expression at column 7"},
      {"1 +", "at column 4"},
      {"1 2", "unexpected '2' at column 3"},
      {"K 256", "unexpected '256' at column 3"},
      {"2 * * 3", "unexpected '*' at column 5"},
      {"1 + )", "unexpected ')' at column 5"},
      {"3 $ 4", "unexpected '$' at column 3"},
      {"+3", "unexpected '+' at column 1"},
      {"12abc", "unexpected 'abc' at column 3"},
      {"floor(K)", "unknown function 'floor' at column 1"},
      {"cdiv(K)", "cdiv() takes exactly 2 arguments, got 1 at column 1"},
      {"cdiv(K, 2, 3)", "cdiv() takes exactly 2 arguments, got 3"},
      {"2 * min(K)", "min() takes at least 2 arguments, got 1 at column 5"},
      {"max(K)", "max() takes at least 2 arguments"},
      {"min(K,)", "unexpected ')' at column 7"},
      {"min()", "unexpected ')' at column 5"},
      {"()", "unexpected ')' at column 2"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Expr> e = Expr::Parse(c.text);
    ASSERT_FALSE(e.ok()) << "'" << c.text << "' parsed";
    EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(e.status().message()), HasSubstr(c.want))
        << "for '" << c.text << "'";
  }
}

TEST(ExprTest, DeepNestingIsRejected) {
  const std::string deep =
      std::string(2000, '(') + "1" + std::string(2000, ')');
  absl::StatusOr<Expr> e = Expr::Parse(deep);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(std::string(e.status().message()), HasSubstr("nested"));
  EXPECT_EQ(Eval(std::string(10, '(') + "7" + std::string(10, ')')), 7);
}

TEST(ExprTest, NamesAndText) {
  absl::StatusOr<Expr> e = Expr::Parse("cdiv(K, 256) * B + K - min(H, R)");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_THAT(e->Names(), ElementsAre("B", "H", "K", "R"));
  EXPECT_EQ(e->text(), "cdiv(K, 256) * B + K - min(H, R)");
  absl::StatusOr<Expr> c = Expr::Parse("256");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->Names().empty());
  // Function names are not dim names.
  absl::StatusOr<Expr> f = Expr::Parse("max(1, 2)");
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->Names().empty());
}

TEST(ExprTest, ParsedExprIsReusable) {
  absl::StatusOr<Expr> e = Expr::Parse("cdiv(K, 256)");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(*e->Eval({{"K", 56}}), 1);
  EXPECT_EQ(*e->Eval({{"K", 1000}}), 4);
  Expr copy = *e;
  EXPECT_EQ(*copy.Eval({{"K", 257}}), 2);
}

}  // namespace
}  // namespace kbench
