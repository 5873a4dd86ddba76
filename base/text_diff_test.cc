#include "base/text_diff.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Lines of `text`, each with its '\n' (only the last may lack it).
std::vector<std::string> Lines(absl::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == absl::string_view::npos ? text.size() : end + 1;
    lines.emplace_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

// "l,s" or "l" (s = 1) of a hunk header.
absl::Status ParseRange(absl::string_view text, int* start, int* count) {
  std::pair<absl::string_view, absl::string_view> parts =
      absl::StrSplit(text, absl::MaxSplits(',', 1));
  *count = 1;
  if (!absl::SimpleAtoi(parts.first, start) ||
      (!parts.second.empty() && !absl::SimpleAtoi(parts.second, count))) {
    return absl::InvalidArgumentError(absl::StrCat("bad range '", text, "'"));
  }
  return absl::OkStatus();
}

// A tiny `patch`: applies unified diff `diff` to `from`, checking every
// context and removed line, the hunk line numbers and counts.
absl::StatusOr<std::string> ApplyPatch(absl::string_view from,
                                       absl::string_view diff) {
  if (diff.empty()) return std::string(from);
  const std::vector<std::string> old_lines = Lines(from);
  const std::vector<std::string> diff_lines = Lines(diff);
  if (diff_lines.size() < 3 || !absl::StartsWith(diff_lines[0], "--- ") ||
      !absl::StartsWith(diff_lines[1], "+++ ")) {
    return absl::InvalidArgumentError("missing ---/+++ header");
  }
  std::string out;
  int out_lines = 0;
  size_t cursor = 0;  // Next line of `from` to copy.
  size_t k = 2;
  while (k < diff_lines.size()) {
    const std::string& header = diff_lines[k++];
    std::vector<absl::string_view> fields = absl::StrSplit(header, ' ');
    if (fields.size() != 4 || fields[0] != "@@" || fields[3] != "@@\n" ||
        !absl::StartsWith(fields[1], "-") ||
        !absl::StartsWith(fields[2], "+")) {
      return absl::InvalidArgumentError(absl::StrCat("bad header: ", header));
    }
    int old_start, old_count, new_start, new_count;
    RETURN_IF_ERROR(ParseRange(fields[1].substr(1), &old_start, &old_count));
    RETURN_IF_ERROR(ParseRange(fields[2].substr(1), &new_start, &new_count));
    std::vector<std::pair<char, std::string>> body;
    while (k < diff_lines.size() && !absl::StartsWith(diff_lines[k], "@@")) {
      const std::string& line = diff_lines[k++];
      if (line[0] == '\\') {
        if (line != "\\ No newline at end of file\n" || body.empty() ||
            body.back().second.back() != '\n') {
          return absl::InvalidArgumentError("misplaced \\ line");
        }
        body.back().second.pop_back();
      } else if (line[0] == ' ' || line[0] == '-' || line[0] == '+') {
        body.emplace_back(line[0], line.substr(1));
      } else {
        return absl::InvalidArgumentError(absl::StrCat("bad line: ", line));
      }
    }
    const int olds = std::count_if(
        body.begin(), body.end(), [](const auto& e) { return e.first != '+'; });
    const int news = std::count_if(
        body.begin(), body.end(), [](const auto& e) { return e.first != '-'; });
    if (olds != old_count || news != new_count) {
      return absl::InvalidArgumentError(absl::StrCat("counts off: ", header));
    }
    // An empty range names the line before it.
    const size_t begin = old_count == 0 ? old_start : old_start - 1;
    if (begin < cursor || begin > old_lines.size()) {
      return absl::InvalidArgumentError(absl::StrCat("out of order: ", header));
    }
    for (; cursor < begin; ++cursor, ++out_lines) out += old_lines[cursor];
    if (out_lines != (new_count == 0 ? new_start : new_start - 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("new start off: ", header));
    }
    for (const auto& [op, text] : body) {
      if (op != '+') {
        if (cursor >= old_lines.size() || old_lines[cursor] != text) {
          return absl::InvalidArgumentError(
              absl::StrCat("line ", cursor + 1, " does not match: ", text));
        }
        ++cursor;
      }
      if (op != '-') {
        out += text;
        ++out_lines;
      }
    }
  }
  for (; cursor < old_lines.size(); ++cursor) out += old_lines[cursor];
  return out;
}

// "line1\n" ... "line<n>\n".
std::string Numbered(int n) {
  std::string text;
  for (int i = 1; i <= n; ++i) absl::StrAppend(&text, "line", i, "\n");
  return text;
}

// Numbered(n) with line `at` (1-based) replaced by `with`.
std::string Replace(int n, int at, absl::string_view with) {
  std::vector<std::string> lines = Lines(Numbered(n));
  lines[at - 1] = absl::StrCat(with, "\n");
  return absl::StrJoin(lines, "");
}

int CountOf(absl::string_view text, absl::string_view piece) {
  int count = 0;
  for (size_t at = text.find(piece); at != absl::string_view::npos;
       at = text.find(piece, at + 1)) {
    ++count;
  }
  return count;
}

TextDiffOptions Context(int lines) {
  TextDiffOptions options;
  options.context_lines = lines;
  return options;
}

TEST(TextDiffTest, EqualTextsGiveEmptyString) {
  TextDiffStats stats{7, 7};
  EXPECT_EQ(UnifiedDiff("", "", {}, &stats), "");
  EXPECT_EQ(stats.added, 0);
  EXPECT_EQ(stats.removed, 0);
  EXPECT_EQ(UnifiedDiff(Numbered(50), Numbered(50)), "");
  EXPECT_EQ(UnifiedDiff("no newline", "no newline"), "");
}

TEST(TextDiffTest, SingleLineChangeInTheMiddle) {
  EXPECT_EQ(UnifiedDiff(Numbered(10), Replace(10, 5, "LINE5")),
            "--- a\n"
            "+++ b\n"
            "@@ -2,7 +2,7 @@\n"
            " line2\n"
            " line3\n"
            " line4\n"
            "-line5\n"
            "+LINE5\n"
            " line6\n"
            " line7\n"
            " line8\n");
}

TEST(TextDiffTest, LabelsGoInTheHeader) {
  TextDiffOptions options;
  options.from_label = "kernel.cu@v1";
  options.to_label = "kernel.cu@v2";
  EXPECT_EQ(UnifiedDiff("x\n", "y\n", options),
            "--- kernel.cu@v1\n+++ kernel.cu@v2\n@@ -1 +1 @@\n-x\n+y\n");
}

TEST(TextDiffTest, AdditionsAtStartAndEnd) {
  EXPECT_EQ(UnifiedDiff("a\nb\nc\n", "x\ny\na\nb\nc\n"),
            "--- a\n+++ b\n@@ -1,3 +1,5 @@\n+x\n+y\n a\n b\n c\n");
  EXPECT_EQ(UnifiedDiff(Numbered(10), Numbered(10) + "end\n"),
            "--- a\n+++ b\n@@ -8,3 +8,4 @@\n line8\n line9\n line10\n+end\n");
  EXPECT_EQ(UnifiedDiff(Numbered(10), "first\n" + Numbered(10)),
            "--- a\n+++ b\n@@ -1,3 +1,4 @@\n+first\n line1\n line2\n line3\n");
}

TEST(TextDiffTest, EmptyToTextAndBack) {
  EXPECT_EQ(UnifiedDiff("", "a\nb\n"),
            "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+a\n+b\n");
  EXPECT_EQ(UnifiedDiff("a\nb\n", ""),
            "--- a\n+++ b\n@@ -1,2 +0,0 @@\n-a\n-b\n");
  EXPECT_EQ(UnifiedDiff("a\n", ""), "--- a\n+++ b\n@@ -1 +0,0 @@\n-a\n");
}

TEST(TextDiffTest, DeletionOfEverything) {
  TextDiffStats stats;
  const std::string diff = UnifiedDiff(Numbered(4), "", {}, &stats);
  EXPECT_EQ(diff,
            "--- a\n+++ b\n@@ -1,4 +0,0 @@\n-line1\n-line2\n-line3\n-line4\n");
  EXPECT_EQ(stats.removed, 4);
  EXPECT_EQ(stats.added, 0);
}

TEST(TextDiffTest, MissingFinalNewline) {
  EXPECT_EQ(UnifiedDiff("a\nb", "a\nb\n"),
            "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n"
            "\\ No newline at end of file\n+b\n");
  EXPECT_EQ(UnifiedDiff("a\nb\n", "a\nb"),
            "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n"
            "\\ No newline at end of file\n");
  EXPECT_EQ(UnifiedDiff("x", "y"),
            "--- a\n+++ b\n@@ -1 +1 @@\n-x\n"
            "\\ No newline at end of file\n+y\n"
            "\\ No newline at end of file\n");
  // On an unchanged context line.
  EXPECT_EQ(UnifiedDiff("a\nb\nc", "X\nb\nc"),
            "--- a\n+++ b\n@@ -1,3 +1,3 @@\n-a\n+X\n b\n c\n"
            "\\ No newline at end of file\n");
  EXPECT_EQ(UnifiedDiff("a\nb", ""),
            "--- a\n+++ b\n@@ -1,2 +0,0 @@\n-a\n-b\n"
            "\\ No newline at end of file\n");
}

TEST(TextDiffTest, FarApartChangesMakeTwoHunks) {
  std::string to = Replace(20, 3, "X3");
  to = absl::StrReplaceAll(to, {{"line17\n", "X17\n"}});
  EXPECT_EQ(UnifiedDiff(Numbered(20), to),
            "--- a\n+++ b\n"
            "@@ -1,6 +1,6 @@\n line1\n line2\n-line3\n+X3\n line4\n line5\n"
            " line6\n"
            "@@ -14,7 +14,7 @@\n line14\n line15\n line16\n-line17\n+X17\n"
            " line18\n line19\n line20\n");
}

TEST(TextDiffTest, HunksMergeWhenContextsMeet) {
  // Changes at lines 5 and 12: 6 unchanged lines between, 2 * context.
  std::string to = absl::StrReplaceAll(
      Numbered(20), {{"line5\n", "X5\n"}, {"line12\n", "X12\n"}});
  std::string diff = UnifiedDiff(Numbered(20), to);
  EXPECT_THAT(diff, StartsWith("--- a\n+++ b\n@@ -2,14 +2,14 @@\n line2\n"));
  EXPECT_THAT(diff, EndsWith("+X12\n line13\n line14\n line15\n"));
  EXPECT_EQ(CountOf(diff, "@@ -"), 1);
  // Changes at lines 5 and 13: 7 unchanged lines between, two hunks.
  to = absl::StrReplaceAll(Numbered(20),
                           {{"line5\n", "X5\n"}, {"line13\n", "X13\n"}});
  diff = UnifiedDiff(Numbered(20), to);
  EXPECT_EQ(CountOf(diff, "@@ -"), 2);
  EXPECT_THAT(diff, HasSubstr("@@ -2,7 +2,7 @@\n"));
  EXPECT_THAT(diff, HasSubstr(" line8\n@@ -10,7 +10,7 @@\n line10\n"));
}

TEST(TextDiffTest, ContextZero) {
  EXPECT_EQ(UnifiedDiff(Numbered(10), Replace(10, 5, "LINE5"), Context(0)),
            "--- a\n+++ b\n@@ -5 +5 @@\n-line5\n+LINE5\n");
  // GNU numbering of an empty side: the line before it.
  std::string inserted =
      absl::StrReplaceAll(Numbered(10), {{"line3\n", "line3\nnew\n"}});
  EXPECT_EQ(UnifiedDiff(Numbered(10), inserted, Context(0)),
            "--- a\n+++ b\n@@ -3,0 +4 @@\n+new\n");
  std::string deleted = absl::StrReplaceAll(Numbered(10), {{"line4\n", ""}});
  EXPECT_EQ(UnifiedDiff(Numbered(10), deleted, Context(0)),
            "--- a\n+++ b\n@@ -4 +3,0 @@\n-line4\n");
  // Changes one line apart stay separate hunks.
  std::string two = absl::StrReplaceAll(
      Numbered(10), {{"line4\n", "X4\n"}, {"line6\n", "X6\n"}});
  EXPECT_EQ(UnifiedDiff(Numbered(10), two, Context(0)),
            "--- a\n+++ b\n@@ -4 +4 @@\n-line4\n+X4\n"
            "@@ -6 +6 @@\n-line6\n+X6\n");
  // Negative counts as zero.
  EXPECT_EQ(UnifiedDiff(Numbered(10), two, Context(-5)),
            UnifiedDiff(Numbered(10), two, Context(0)));
}

TEST(TextDiffTest, StatsCountAddedAndRemovedLines) {
  std::string to =
      absl::StrReplaceAll(Numbered(30), {{"line2\n", ""},
                                         {"line3\n", ""},
                                         {"line10\n", "ten\nTEN\n10\n"},
                                         {"line25\n", "line25\nextra\n"}});
  TextDiffStats stats;
  const std::string diff = UnifiedDiff(Numbered(30), to, {}, &stats);
  EXPECT_EQ(stats.removed, 3);
  EXPECT_EQ(stats.added, 4);
  absl::StatusOr<std::string> patched = ApplyPatch(Numbered(30), diff);
  ASSERT_TRUE(patched.ok()) << patched.status() << "\n" << diff;
  EXPECT_EQ(*patched, to);
}

TEST(TextDiffTest, LongDiffIsTruncatedAtALineEnd) {
  const std::string from = Numbered(5000);
  std::string to = absl::StrReplaceAll(from, {{"line", "LINE"}});
  TextDiffOptions unbounded;
  unbounded.max_output_bytes = 0;
  const std::string full = UnifiedDiff(from, to, unbounded);
  ASSERT_GT(full.size(), 64u * 1024);

  TextDiffStats stats;
  const std::string cut = UnifiedDiff(from, to, {}, &stats);
  EXPECT_LE(cut.size(), 64u * 1024);
  EXPECT_GT(cut.size(), 60u * 1024);
  EXPECT_THAT(cut, EndsWith("\n... (diff truncated)\n"));
  const std::string kept = cut.substr(0, cut.size() - 21);
  EXPECT_EQ(full.substr(0, kept.size()), kept);
  EXPECT_EQ(stats.removed, 5000);  // Counts cover the whole diff.
  EXPECT_EQ(stats.added, 5000);

  TextDiffOptions small;
  small.max_output_bytes = 100;
  const std::string short_cut = UnifiedDiff(from, to, small);
  EXPECT_LE(short_cut.size(), 100u);
  EXPECT_EQ(short_cut,
            "--- a\n+++ b\n@@ -1,5000 +1,5000 @@\n-line1\n-line2\n-line3\n"
            "-line4\n-line5\n-line6\n... (diff truncated)\n");
  small.max_output_bytes = 5;
  EXPECT_EQ(UnifiedDiff(from, to, small), "... (diff truncated)\n");
  // A diff that fits exactly is not cut.
  const std::string exact = UnifiedDiff("x\n", "y\n");
  small.max_output_bytes = exact.size();
  EXPECT_EQ(UnifiedDiff("x\n", "y\n", small), exact);
}

// Number of lines of a longest common subsequence (textbook DP).
int LcsLength(const std::vector<std::string>& a,
              const std::vector<std::string>& b) {
  std::vector<std::vector<int>> t(a.size() + 1,
                                  std::vector<int>(b.size() + 1, 0));
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      t[i][j] = a[i - 1] == b[j - 1] ? t[i - 1][j - 1] + 1
                                     : std::max(t[i - 1][j], t[i][j - 1]);
    }
  }
  return t[a.size()][b.size()];
}

std::string RandomText(std::mt19937* rng, int max_lines, int vocabulary) {
  std::string text;
  const int n = (*rng)() % (max_lines + 1);
  for (int i = 0; i < n; ++i) {
    absl::StrAppend(&text, "t", (*rng)() % vocabulary, "\n");
  }
  if (!text.empty() && (*rng)() % 4 == 0) text.pop_back();
  return text;
}

TEST(TextDiffTest, RandomDiffsApplyAndAreMinimal) {
  std::mt19937 rng(20240611);
  for (int round = 0; round < 200; ++round) {
    const std::string from = RandomText(&rng, 25, 6);
    std::string to;
    if (round % 2 == 0) {
      to = RandomText(&rng, 25, 6);
    } else {  // A few edits of `from`.
      std::vector<std::string> lines = Lines(from);
      for (int e = rng() % 4; e >= 0; --e) {
        const size_t at = rng() % (lines.size() + 1);
        if (rng() % 2 == 0 && at < lines.size()) {
          lines.erase(lines.begin() + at);
        } else {
          lines.insert(lines.begin() + at, absl::StrCat("n", rng() % 3, "\n"));
        }
      }
      to = absl::StrJoin(lines, "");
    }
    TextDiffOptions options = Context(rng() % 4);
    options.max_output_bytes = 0;
    TextDiffStats stats;
    const std::string diff = UnifiedDiff(from, to, options, &stats);
    SCOPED_TRACE(absl::StrCat("round ", round, "\nfrom:\n", from, "\nto:\n", to,
                              "\ndiff:\n", diff));
    EXPECT_EQ(diff.empty(), from == to);
    absl::StatusOr<std::string> patched = ApplyPatch(from, diff);
    ASSERT_TRUE(patched.ok()) << patched.status();
    EXPECT_EQ(*patched, to);
    // Stats match the printed lines, and the diff is minimal.
    int plus = 0, minus = 0;
    for (const std::string& line : Lines(diff)) {
      if (absl::StartsWith(line, "+++ ") || absl::StartsWith(line, "--- ")) {
        continue;
      }
      plus += line[0] == '+';
      minus += line[0] == '-';
    }
    EXPECT_EQ(stats.added, plus);
    EXPECT_EQ(stats.removed, minus);
    const int lcs = LcsLength(Lines(from), Lines(to));
    EXPECT_EQ(stats.removed, static_cast<int>(Lines(from).size()) - lcs);
    EXPECT_EQ(stats.added, static_cast<int>(Lines(to).size()) - lcs);
  }
}

TEST(TextDiffTest, LargeSimilarFilesGiveSmallDiff) {
  const std::string from = Numbered(6000);
  std::string to = absl::StrReplaceAll(
      from, {{"line100\n", "changed\n"}, {"line4000\n", ""}});
  TextDiffStats stats;
  const std::string diff = UnifiedDiff(from, to, {}, &stats);
  EXPECT_EQ(stats.added, 1);
  EXPECT_EQ(stats.removed, 2);  // line100 and line4000.
  absl::StatusOr<std::string> patched = ApplyPatch(from, diff);
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_EQ(*patched, to);
}

TEST(TextDiffTest, UnrelatedLargeFilesFinishAndApply) {
  std::mt19937 rng(7);
  // Distinct lines, then lines from a small shared vocabulary (the costly
  // case for Myers: many matches, large edit distance).
  for (int vocabulary : {1 << 30, 40}) {
    std::string from, to;
    for (int i = 0; i < 5000; ++i) {
      absl::StrAppend(&from, "  x", rng() % vocabulary, " = y;\n");
      absl::StrAppend(&to, "  x", rng() % vocabulary, " = y;\n");
    }
    TextDiffOptions options;
    options.max_output_bytes = 0;
    TextDiffStats stats;
    const std::string diff = UnifiedDiff(from, to, options, &stats);
    SCOPED_TRACE(absl::StrCat("vocabulary ", vocabulary));
    EXPECT_GT(stats.added, 0);
    EXPECT_LE(stats.added, 5000);
    EXPECT_EQ(stats.added, stats.removed);  // Same line counts.
    absl::StatusOr<std::string> patched = ApplyPatch(from, diff);
    ASSERT_TRUE(patched.ok()) << patched.status();
    EXPECT_EQ(*patched, to);
  }
}

TEST(TextDiffTest, PastTheWorkBudgetTheRestIsReplacedWholesale) {
  // 10000 lines each from 40 shared contents: a large edit distance with
  // many matches, beyond the search budget. Still a correct diff.
  std::mt19937 rng(11);
  std::string from, to;
  for (int i = 0; i < 10000; ++i) {
    absl::StrAppend(&from, "x", rng() % 40, "\n");
    absl::StrAppend(&to, "x", rng() % 40, "\n");
  }
  TextDiffOptions options;
  options.max_output_bytes = 0;
  TextDiffStats stats;
  const std::string diff = UnifiedDiff(from, to, options, &stats);
  EXPECT_EQ(stats.removed, 10000);
  EXPECT_EQ(stats.added, 10000);
  EXPECT_THAT(diff, StartsWith("--- a\n+++ b\n@@ -1,10000 +1,10000 @@\n"));
  absl::StatusOr<std::string> patched = ApplyPatch(from, diff);
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_EQ(*patched, to);
}

}  // namespace
}  // namespace kbench
