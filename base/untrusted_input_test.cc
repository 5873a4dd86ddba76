// Tests of the checks every front end applies to client input: JSON size
// and depth before any recursive walk, and identifiers that reach the
// store, log lines and NVRTC.
#include "base/untrusted_input.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(JsonLimitsTest, RefusesDeepNestingBeforeParsing) {
  // What crashed kbd on main: 60,000 levels in a 120 KB body.
  const std::string deep =
      "{\"tools\":" + std::string(60000, '[') + std::string(60000, ']') + "}";
  const absl::Status s = CheckJsonLimits(deep);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("32 deep"));
  EXPECT_FALSE(ParseUntrustedJson(deep).ok());
  // Exactly at the limit is fine.
  const std::string ok = std::string(32, '[') + std::string(32, ']');
  EXPECT_TRUE(ParseUntrustedJson(ok).ok());
  EXPECT_FALSE(ParseUntrustedJson("[" + ok + "]").ok());
}

TEST(JsonLimitsTest, BracketsInsideStringsDoNotCount) {
  const std::string src =
      "{\"kernel_code\": \"" + std::string(1000, '[') + "\\\"{{{\"}";
  EXPECT_TRUE(CheckJsonLimits(src).ok());
  EXPECT_TRUE(ParseUntrustedJson(src).ok());
}

TEST(JsonLimitsTest, RefusesOversizedText) {
  JsonLimits limits;
  limits.max_bytes = 16;
  const absl::Status s = CheckJsonLimits(std::string(17, ' '), limits);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("at most 16"));
}

TEST(JsonLimitsTest, ParseErrorsNameThePosition) {
  absl::StatusOr<nlohmann::json> j = ParseUntrustedJson("{\"a\": }");
  ASSERT_FALSE(j.ok());
  EXPECT_THAT(j.status().message(), HasSubstr("not valid JSON"));
  EXPECT_FALSE(ParseUntrustedJson("").ok());
  EXPECT_FALSE(ParseUntrustedJson("\"\xff\"").ok());  // nlohmann checks UTF-8.
}

TEST(IdsTest, SessionIds) {
  EXPECT_TRUE(ValidateSessionId("").ok());
  EXPECT_TRUE(ValidateSessionId("s-0123abcd").ok());
  EXPECT_TRUE(ValidateSessionId("agent.run_7:a-b").ok());
  for (const std::string& bad :
       {std::string("\xff"), std::string("a b"), std::string("a\nb"),
        std::string("a/b"), std::string(129, 'a'), std::string("a\0b", 3),
        std::string("s-1'; DROP TABLE jobs;--")}) {
    const absl::Status s = ValidateSessionId(bad, "X-Kbench-Session");
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(s.message(), HasSubstr("X-Kbench-Session"));
    // The message is safe to log: printable ASCII only, bounded.
    for (char c : std::string(s.message())) {
      EXPECT_TRUE(c >= 0x20 && c < 0x7f) << s.message();
    }
    EXPECT_LT(s.message().size(), 300u);
  }
  EXPECT_FALSE(ValidateJobId("").ok());
  EXPECT_TRUE(ValidateJobId("j-00000001").ok());
  // The message says where a valid id comes from: by default the RPC that
  // hands out ids of that kind; the caller's source where it names one; no
  // hint for an id a worker names itself by.
  EXPECT_THAT(ValidateJobId("a b").message(),
              HasSubstr("; use a job id as SubmitJob returned it"));
  EXPECT_THAT(ValidateSessionId("a b").message(),
              HasSubstr("; use a session id as CreateSession returned it"));
  EXPECT_THAT(
      ValidateSessionId("a b", "problem", kProblemNameSource).message(),
      HasSubstr("problem 'a b' has a character outside letters, digits, '.', "
                "'_', ':' and '-'; use a problem name as ListProblems "
                "returns it"));
  EXPECT_THAT(
      ValidateSessionId("a b", "worker.host_id", "").message(),
      AllOf(HasSubstr("worker.host_id 'a b'"), Not(HasSubstr("; use"))));
  EXPECT_THAT(ValidateJobId("a b", "--host-id", "").message(),
              Not(HasSubstr("; use")));
}

TEST(IdsTest, FileNames) {
  EXPECT_TRUE(ValidateFileName("").ok());
  EXPECT_TRUE(ValidateFileName("kernel.cu").ok());
  EXPECT_TRUE(ValidateFileName("gather_linear-v2+fast.cu").ok());
  EXPECT_TRUE(ValidateFileName("my kernel.cu").ok());
  for (const std::string& bad :
       {std::string("../x.cu"), std::string("/etc/passwd"),
        std::string(".hidden.cu"), std::string("-o.cu"), std::string("a\nb.cu"),
        std::string(" k.cu"), std::string(65536, 'k'),
        std::string("k\xc3\xa9.cu")}) {
    EXPECT_EQ(ValidateFileName(bad).code(), absl::StatusCode::kInvalidArgument)
        << bad.substr(0, 40);
  }
}

TEST(TextTest, Utf8AndControls) {
  EXPECT_TRUE(ValidateText("trial 3/5 on odd/b7\t\xc3\xa9", 64, "d").ok());
  EXPECT_FALSE(ValidateText("a\nb", 64, "d").ok());
  EXPECT_FALSE(ValidateText("\xff", 64, "d").ok());
  EXPECT_FALSE(ValidateText("\xc0\x80", 64, "d").ok());      // Overlong NUL.
  EXPECT_FALSE(ValidateText("\xed\xa0\x80", 64, "d").ok());  // Surrogate.
  EXPECT_FALSE(ValidateText(std::string(65, 'a'), 64, "d").ok());
  EXPECT_TRUE(ValidateUtf8("line\nline\r\n\xf0\x9f\x98\x80", "source").ok());
  EXPECT_FALSE(ValidateUtf8("ok\xe2\x82", "source").ok());  // Cut short.
}

TEST(Utf8Test, PrefixNeverEndsInsideACharacter) {
  const std::string text =
      "ab\xc3\xa9"
      "cd";  // "abécd"
  EXPECT_EQ(Utf8Prefix(text, 10), text);
  EXPECT_EQ(Utf8Prefix(text, 4), "ab\xc3\xa9");
  EXPECT_EQ(Utf8Prefix(text, 3), "ab");  // Not half of the é.
  EXPECT_EQ(Utf8Prefix(text, 0), "");
  const std::string four = "\xf0\x9f\x98\x80";  // One 4-byte character.
  EXPECT_EQ(Utf8Prefix(four, 3), "");
}

TEST(Utf8Test, ScrubReplacesOnlyIllFormedBytes) {
  EXPECT_EQ(ScrubUtf8("ok \xc3\xa9"), "ok \xc3\xa9");
  EXPECT_EQ(ScrubUtf8("a\xc3"), "a\xef\xbf\xbd");
  EXPECT_EQ(ScrubUtf8("\xff\xfe"), "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_TRUE(IsValidUtf8(ScrubUtf8("x\xed\xa0\x80y")));  // A surrogate.
}

}  // namespace
}  // namespace kbench
