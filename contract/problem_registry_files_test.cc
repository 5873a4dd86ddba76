// The problem registry against hostile problem files (found by an
// adversarial review, 2026-12-05): files named outside the library or in
// another problem's folder, an example that is a golden, a FIFO, bytes that
// are not UTF-8, dims and tensors too large for the runner, formulas that
// fail at a shape, and too many shapes. Each is refused with the file, and
// the other problems still load.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/untrusted_input.h"
#include "contract/problem_registry.h"
#include "contract/registry_fixtures.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::kRowMean;
using testing::ReadText;
using testing::RefusedError;
using testing::TempTree;
using testing::WriteText;

constexpr char kRowMeanFile[] = "row_mean_fp32/problem.textproto";

using Edits = std::vector<std::pair<std::string, std::string>>;

// Loads the shipped problems with row_mean_fp32 added, its problem file
// edited by `edits` (from -> to) and its folder then changed by `prepare`,
// and returns why row_mean_fp32 was refused (the others must load).
std::string Refusal(const Edits& edits,
                    const std::function<void(const fs::path&)>& prepare = {}) {
  TempTree tree;
  tree.CopyShipped();
  const fs::path folder = tree.problems() / "row_mean_fp32";
  fs::copy(kRowMean, folder);
  std::string text = ReadText(folder / "problem.textproto");
  for (const auto& [from, to] : edits) {
    EXPECT_NE(text.find(from), std::string::npos) << from;
    text = absl::StrReplaceAll(text, {{from, to}});
  }
  WriteText(folder / "problem.textproto", text);
  if (prepare) prepare(folder);
  return RefusedError(tree.problems(), kRowMeanFile);
}

TEST(ProblemFilesTest, NamedFilesStayInTheLibrary) {
  EXPECT_THAT(Refusal({{"golden { file: \"golden.cu\" }",
                        "golden { file: \"/etc/hostname\" }"}}),
              HasSubstr("golden.file '/etc/hostname': must be a path "
                        "relative to the problem file"));
  // A symlink inside the folder to a file outside the library.
  TempTree elsewhere;
  const fs::path outside = elsewhere.examples() / "golden.cu";
  EXPECT_THAT(Refusal({},
                      [&](const fs::path& folder) {
                        fs::copy_file(folder / "golden.cu", outside);
                        fs::remove(folder / "golden.cu");
                        fs::create_symlink(outside, folder / "golden.cu");
                      }),
              AllOf(HasSubstr("golden.file 'golden.cu': is outside the "
                              "problem library"),
                    ::testing::Not(HasSubstr(outside.string()))));
  // Another problem's golden as this one's example: an example is shown
  // to clients, a golden is not.
  EXPECT_THAT(Refusal({{"example_kernel: \"example.cu\"",
                        "example_kernel: \"../softmax_fp32/golden.cu\""}}),
              HasSubstr("example_kernel '../softmax_fp32/golden.cu': is in "
                        "another problem's folder ('softmax_fp32')"));
  EXPECT_THAT(Refusal({{"example_kernel: \"example.cu\"",
                        "example_kernel: \"golden.cu\""}}),
              HasSubstr("example_kernel and golden.file name the same file "
                        "'golden.cu'"));
}

// A FIFO (or a device) where a kernel file should be is refused at once,
// not read until something writes to it.
TEST(ProblemFilesTest, AFifoIsNotRead) {
  EXPECT_THAT(Refusal({},
                      [](const fs::path& folder) {
                        fs::remove(folder / "golden.cu");
                        ASSERT_EQ(mkfifo((folder / "golden.cu").c_str(), 0600),
                                  0);
                      }),
              HasSubstr("golden.file 'golden.cu': cannot read"));
}

TEST(ProblemFilesTest, TextThatIsNotUtf8IsRefused) {
  const std::string error = Refusal(
      {{"title: \"Row means (fp32)\"", "title: \"Row means \\377 (fp32)\""}});
  EXPECT_THAT(error, HasSubstr("kbench.v1.Problem.title is not UTF-8"));
  // The refusal itself is UTF-8: kbd lists it in ListProblems.
  EXPECT_TRUE(IsValidUtf8(error));
}

TEST(ProblemFilesTest, SizesTheRunnerCannotHoldAreRefused) {
  EXPECT_THAT(Refusal({{"dims { name: \"C\" min: 1 max: 65536",
                        "dims { name: \"C\" min: 1 max: 4294967296"}}),
              HasSubstr("max 4294967296 is over 2147483647"));
  // Elements that fit in 64 bits, bytes that would not fit in a tensor.
  EXPECT_THAT(
      Refusal({{"dims { name: \"R\" min: 1 max: 65536",
                "dims { name: \"R\" min: 1 max: 2147483647"},
               {"dims { name: \"C\" min: 1 max: 65536",
                "dims { name: \"C\" min: 1 max: 2147483647"},
               {"dims { key: \"R\" value: 64 } dims { key: \"C\" value: 1000 }",
                "dims { key: \"R\" value: 2147483647 } dims { key: \"C\" "
                "value: 2147483647 }"}}),
      AllOf(HasSubstr("tensor 'x' would have"),
            HasSubstr("bytes a tensor may hold")));
}

TEST(ProblemFilesTest, FormulasAreEvaluatedAtEveryShape) {
  EXPECT_THAT(
      Refusal({{"flops: \"R*C\"", "flops: \"R*C/(C-C)\""}}),
      AllOf(HasSubstr("flops 'R*C/(C-C)'"), HasSubstr("division by zero")));
}

TEST(ProblemFilesTest, ANameIsAnIdNotAPath) {
  EXPECT_THAT(Refusal({{"name: \"row_mean_fp32\"", "name: \"..\""}}),
              HasSubstr("name: must not start with '.'"));
  EXPECT_THAT(
      Refusal({{"name: \"row_mean_fp32\"",
                absl::StrCat("name: \"", std::string(129, 'a'), "\"")}}),
      HasSubstr("name is 129 bytes; at most 128"));
}

TEST(ProblemFilesTest, TooManyShapesAreRefused) {
  std::string shapes;
  for (int i = 0; i < 65; ++i) {
    absl::StrAppend(&shapes, "shapes { name: \"s", i,
                    "\" dims { key: \"R\" value: 1 } dims { key: \"C\" "
                    "value: 1 } }\n");
  }
  EXPECT_THAT(Refusal({{"  shapes { name: \"r1c1\"",
                        shapes + "  shapes { name: \"r1c1\""}}),
              HasSubstr("more than 64 shapes"));
}

}  // namespace
}  // namespace kbench
