// ExePath, ExeDir and DefaultDataDir: where kbench finds itself and its
// data.
#include "base/paths.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

namespace kbench {
namespace {

TEST(PathsTest, ExePathIsThisTestBinaryAndExeDirItsFolder) {
  const std::string exe = ExePath();
  ASSERT_FALSE(exe.empty());
  EXPECT_EQ(std::filesystem::path(exe).filename(), "kb_base_test");
  EXPECT_TRUE(std::filesystem::exists(exe));
  EXPECT_EQ(ExeDir(), std::filesystem::path(exe).parent_path().string());
}

TEST(PathsTest, DefaultDataDirPrefersKbenchDataDirThenXdgThenHome) {
  setenv("KBENCH_DATA_DIR", "/data/kb", 1);
  setenv("XDG_STATE_HOME", "/xdg", 1);
  EXPECT_EQ(DefaultDataDir(), "/data/kb");
  unsetenv("KBENCH_DATA_DIR");
  EXPECT_EQ(DefaultDataDir(), "/xdg/kbench");
  unsetenv("XDG_STATE_HOME");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(DefaultDataDir(), "/home/u/.local/state/kbench");
}

}  // namespace
}  // namespace kbench
