// Test support for the problem registry's tests: a temporary problems
// tree (problems/ and examples/ side by side, as in kernels/), file
// helpers, and the one-refusal check.
#ifndef KBENCH_CONTRACT_REGISTRY_FIXTURES_H_
#define KBENCH_CONTRACT_REGISTRY_FIXTURES_H_

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "contract/problem_registry.h"
#include "gtest/gtest.h"

namespace kbench {
namespace testing {

namespace fs = std::filesystem;

inline const std::string kProblemsDir =
    std::string(KBENCH_SOURCE_DIR) + "/kernels/problems";

inline std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

// A fresh directory with problems/ and examples/ subfolders, removed at the
// end of the test.
class TempTree {
 public:
  TempTree() {
    std::string pattern =
        (fs::temp_directory_path() / "kb_registry_test_XXXXXX").string();
    char* made = mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr);
    root_ = pattern;
    fs::create_directories(problems());
    fs::create_directories(root_ / "examples");
  }
  ~TempTree() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  fs::path problems() const { return root_ / "problems"; }
  fs::path examples() const { return root_ / "examples"; }

  // Copies the shipped problems and examples.
  void CopyShipped() {
    fs::copy(kProblemsDir, problems(), fs::copy_options::recursive);
    for (const auto& entry : fs::directory_iterator(
             std::string(KBENCH_SOURCE_DIR) + "/kernels/examples")) {
      fs::copy_file(entry.path(), examples() / entry.path().filename());
    }
  }

 private:
  fs::path root_;
};

// Loads `dir`, expects `file` (relative to it) to be the one refusal and
// the shipped problems to load still, and returns why it was refused.
inline std::string RefusedError(const fs::path& dir, const std::string& file,
                                const ProblemRegistry::Options& options = {}) {
  absl::StatusOr<std::unique_ptr<ProblemRegistry>> registry =
      ProblemRegistry::LoadDir(dir.string(), options);
  EXPECT_TRUE(registry.ok()) << registry.status();
  if (!registry.ok()) return "";
  EXPECT_TRUE((*registry)->Find("gather_linear_bf16").ok());
  const std::vector<ProblemRegistry::Refused>& refused = (*registry)->refused();
  EXPECT_EQ(refused.size(), 1u);
  if (refused.size() != 1) return "";
  EXPECT_EQ(refused[0].file, file);
  return refused[0].error;
}

// The folder of the problem added as data in the integration tests.
inline const fs::path kRowMean =
    fs::path(KBENCH_SOURCE_DIR) / "tests/integration/problems/row_mean_fp32";

}  // namespace testing
}  // namespace kbench

#endif  // KBENCH_CONTRACT_REGISTRY_FIXTURES_H_
