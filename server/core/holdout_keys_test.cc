// The holdout secret (server/core/holdout_keys.h): kbd's default file is
// created once with mode 0600 and read back unchanged; an operator's file
// must be private and long enough; keys differ per job and per secret, and
// the file's text is not what keys are made of.
#include "server/core/holdout_keys.h"

#include <sys/stat.h>

#include <fstream>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::kbench::testing::TempDir;
using ::testing::HasSubstr;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Write(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream(path) << text;
  ASSERT_EQ(chmod(path.c_str(), mode), 0);
}

TEST(HoldoutKeysTest, DefaultFileIsCreatedOnceAndKept) {
  TempDir dir;
  auto first = HoldoutKeys::Load({"", dir.path()});
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string path = dir.path() + "/holdout.secret";
  EXPECT_EQ((*first)->where(), path);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  const std::string text = ReadAll(path);
  EXPECT_EQ(text.size(), 65u);  // 64 hex digits and a newline.
  auto again = HoldoutKeys::Load({"", dir.path()});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(ReadAll(path), text);
  EXPECT_EQ((*first)->ForJob("p", "j-1"), (*again)->ForJob("p", "j-1"));
  // The key is not the file's text, nor made of it in the clear.
  const std::string key = (*first)->ForJob("p", "j-1");
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(text.find(key), std::string::npos);
}

TEST(HoldoutKeysTest, KeysDifferPerJobProblemAndSecret) {
  TempDir a, b;
  auto ka = HoldoutKeys::Load({"", a.path()});
  auto kb = HoldoutKeys::Load({"", b.path()});
  ASSERT_TRUE(ka.ok() && kb.ok());
  std::set<std::string> keys;
  for (int i = 0; i < 100; ++i) {
    keys.insert((*ka)->ForJob("p", absl::StrCat("j-", i)));
  }
  EXPECT_EQ(keys.size(), 100u);
  EXPECT_NE((*ka)->ForJob("p", "j-1"), (*ka)->ForJob("q", "j-1"));
  EXPECT_NE((*ka)->ForJob("p", "j-1"), (*kb)->ForJob("p", "j-1"));
  EXPECT_NE(HoldoutKeys::Ephemeral()->ForJob("p", "j-1"),
            HoldoutKeys::Ephemeral()->ForJob("p", "j-1"));
  EXPECT_NE(HoldoutKeys::FreshKey(), HoldoutKeys::FreshKey());
}

TEST(HoldoutKeysTest, OperatorFileMustBePrivateAndLongEnough) {
  TempDir dir;
  const std::string path = dir.path() + "/op.secret";
  Write(path, std::string(40, 'x') + "\n", 0600);
  auto ok = HoldoutKeys::Load({path, dir.path()});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)->where(), path);

  Write(path, std::string(40, 'x'), 0644);
  auto open = HoldoutKeys::Load({path, dir.path()});
  EXPECT_EQ(open.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(open.status().message(), HasSubstr("chmod 600"));
  EXPECT_THAT(open.status().message(), HasSubstr("holdout secret file"));

  Write(path, "short\n", 0600);
  auto shortish = HoldoutKeys::Load({path, dir.path()});
  EXPECT_EQ(shortish.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(shortish.status().message(), HasSubstr("at least 32"));

  Write(path, std::string(5000, 'y'), 0600);
  EXPECT_EQ(HoldoutKeys::Load({path, dir.path()}).status().code(),
            absl::StatusCode::kInvalidArgument);

  // A missing operator file is not created in its place.
  const std::string missing = dir.path() + "/none.secret";
  auto none = HoldoutKeys::Load({missing, dir.path()});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(none.status().message(), HasSubstr("--holdout-secret-file"));
  struct stat st;
  EXPECT_NE(stat(missing.c_str(), &st), 0);
}

}  // namespace
}  // namespace kbench
