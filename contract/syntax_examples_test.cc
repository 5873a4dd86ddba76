// Every `// @kb` example that a person or a model is shown parses: the ones
// in the parser's own error messages, the ones quoted in the sources and
// docs, and the plans in the docs' code blocks (which must also validate
// against the problem they name). A message that teaches a syntax the
// parser refuses sends an agent in circles, so this is checked, not
// reviewed.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "contract/launch_plan.h"
#include "contract/problem_registry.h"
#include "gtest/gtest.h"
#include "testing/process.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;

// A launch line that makes a lone workspace or problem example a whole plan.
constexpr char kFiller[] = "// @kb launch k grid(1) block(1)";

bool IsDirective(absl::string_view text) {
  text = absl::StripLeadingAsciiWhitespace(text);
  return absl::StartsWith(text, "// @kb") || absl::StartsWith(text, "//@kb");
}

// A grammar line ("// @kb workspace NAME bytes(EXPR)") or an elided one
// ("// @kb launch ...") shows the shape, not an example to copy.
bool IsTemplate(const std::string& text) {
  static const std::regex kPlaceholder("\\b[A-Z][A-Z_]+\\b|\\.\\.\\.|\\[");
  return std::regex_search(text, kPlaceholder);
}

// A directive with at least one word after its keyword: "`// @kb`" and
// "`// @kb launch`" name the syntax, "`// @kb problem gather_linear_fp32`"
// is an example to copy.
bool IsExample(absl::string_view text) {
  if (!IsDirective(text)) return false;
  const std::vector<absl::string_view> words = absl::StrSplit(
      text.substr(text.find("@kb") + 3), ' ', absl::SkipWhitespace());
  return words.size() >= 2;
}

// The `...` spans of one line of text that quote an example directive.
std::vector<std::string> QuotedExamples(absl::string_view line) {
  std::vector<std::string> out;
  std::vector<absl::string_view> parts = absl::StrSplit(line, '`');
  for (size_t i = 1; i + 1 < parts.size(); i += 2) {
    if (IsExample(parts[i])) out.emplace_back(parts[i]);
  }
  return out;
}

// Parses one quoted example (with a filler launch where it has none).
absl::StatusOr<v1::LaunchPlan> ParseExample(const std::string& example) {
  const bool is_launch = absl::StrContains(example, "@kb launch");
  return ParseLaunchPlan(is_launch ? example
                                   : absl::StrCat(example, "\n", kFiller));
}

// The shipped problems, loaded once for the whole test binary.
const ProblemRegistry& Problems() {
  static const ProblemRegistry* registry = [] {
    auto loaded =
        ProblemRegistry::LoadDir(testing::SourcePath("kernels/problems"));
    if (!loaded.ok()) {
      ADD_FAILURE() << loaded.status();
      return static_cast<ProblemRegistry*>(nullptr);
    }
    return loaded->release();
  }();
  if (registry == nullptr) std::abort();
  return *registry;
}

TEST(SyntaxExamplesTest, ParserMessagesShowExamplesThatParse) {
  const std::vector<std::string> bad_sources = {
      "__global__ void k() {}",             // no launch line
      "// @kb launch 1k grid(1) block(1)",  // bad entry name
      absl::StrCat("// @kb workspace 9 bytes(4)\n", kFiller),
      absl::StrCat("// @kb workspace partial\n", kFiller),
      absl::StrCat("// @kb problem a b\n", kFiller),
  };
  for (const std::string& source : bad_sources) {
    absl::StatusOr<v1::LaunchPlan> plan = ParseLaunchPlan(source);
    ASSERT_FALSE(plan.ok()) << source;
    const std::vector<std::string> examples =
        QuotedExamples(plan.status().message());
    EXPECT_FALSE(examples.empty())
        << "the message for `" << source
        << "` shows no example: " << plan.status().message();
    for (const std::string& example : examples) {
      absl::StatusOr<v1::LaunchPlan> parsed = ParseExample(example);
      EXPECT_TRUE(parsed.ok())
          << "the message for `" << source << "` shows `" << example
          << "`, which does not parse: " << parsed.status();
      if (parsed.ok() && absl::StrContains(example, "@kb launch")) {
        absl::StatusOr<const v1::Problem*> problem =
            Problems().Find("gather_linear_fp32");
        ASSERT_TRUE(problem.ok()) << problem.status();
        EXPECT_TRUE(ValidateLaunchPlan(*parsed, **problem).ok()) << example;
      }
    }
  }
}

// The text files a person or a model reads: docs and the non-test sources
// whose strings become messages, tool descriptions and the contract text.
std::vector<fs::path> ReadableFiles() {
  std::vector<fs::path> files = {testing::SourcePath("README.md")};
  for (const char* dir :
       {"docs", "agent", "base", "client", "compiler", "contract", "report",
        "runner", "server", "worker", "analysis", "kernels"}) {
    const fs::path root = testing::SourcePath(dir);
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      const fs::path& p = entry.path();
      const std::string name = p.filename().string();
      if (!entry.is_regular_file() || absl::EndsWith(name, "_test.cc")) {
        continue;
      }
      const std::string ext = p.extension().string();
      if (ext == ".md" || ext == ".cc" || ext == ".h" || ext == ".textproto" ||
          ext == ".cu") {
        files.push_back(p);
      }
    }
  }
  return files;
}

std::vector<std::string> Lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(SyntaxExamplesTest, QuotedExamplesInDocsAndSourcesParse) {
  int checked = 0;
  for (const fs::path& path : ReadableFiles()) {
    const std::vector<std::string> lines = Lines(path);
    for (size_t i = 0; i < lines.size(); ++i) {
      for (const std::string& example : QuotedExamples(lines[i])) {
        // A C++ message built from pieces ("`// @kb workspace ", name, ...)
        // is checked through the parser's messages above.
        if (absl::StrContains(example, "\"") || IsTemplate(example)) continue;
        ++checked;
        absl::StatusOr<v1::LaunchPlan> parsed = ParseExample(example);
        EXPECT_TRUE(parsed.ok()) << path.string() << ":" << i + 1 << ": `"
                                 << example << "`: " << parsed.status();
      }
      // The syntax before `// @kb` must not come back in any message.
      EXPECT_FALSE(absl::StrContains(lines[i], "// kbench: launch"))
          << path.string() << ":" << i + 1 << ": stale syntax";
    }
  }
  // At least the parser's `// @kb problem gather_linear_fp32`: a scan that
  // finds nothing checks nothing.
  EXPECT_GE(checked, 1);
}

// Each fenced block of a doc that declares a plan is a whole, valid plan for
// the problem it names.
TEST(SyntaxExamplesTest, PlansInDocCodeBlocksParseAndValidate) {
  int checked = 0;
  for (const fs::path& path : ReadableFiles()) {
    if (path.extension() != ".md") continue;
    const std::vector<std::string> lines = Lines(path);
    bool in_block = false;
    size_t block_start = 0;
    std::vector<std::string> plan_lines;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(lines[i]),
                           "```")) {
        if (in_block && !plan_lines.empty()) {
          const std::string plan_text = absl::StrJoin(plan_lines, "\n");
          if (!IsTemplate(plan_text)) {
            ++checked;
            const std::string where =
                absl::StrCat(path.string(), ":", block_start + 1);
            absl::StatusOr<v1::LaunchPlan> plan = ParseLaunchPlan(plan_text);
            ASSERT_TRUE(plan.ok()) << where << ": " << plan.status();
            if (!plan->problem().empty()) {
              auto problem = Problems().Find(plan->problem());
              ASSERT_TRUE(problem.ok()) << where << ": " << problem.status();
              absl::Status valid = ValidateLaunchPlan(*plan, **problem);
              EXPECT_TRUE(valid.ok()) << where << ": " << valid;
            }
          }
        }
        in_block = !in_block;
        block_start = i;
        plan_lines.clear();
        continue;
      }
      if (in_block && IsDirective(lines[i])) plan_lines.push_back(lines[i]);
    }
  }
  // docs/kernel-contract.md has three example plans.
  EXPECT_GE(checked, 3);
}

}  // namespace
}  // namespace kbench
