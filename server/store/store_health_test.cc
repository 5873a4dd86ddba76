// Tests of Store::CheckWritable (server/store/store.h), what /healthz reports:
// a real write that fails when the database is locked by another process,
// when files cannot grow (RLIMIT_FSIZE, which binds root too), when the
// file system is full or read-only (a tiny tmpfs, when this process may
// mount one), or when less than min_free_bytes is left; and its 1 s cache.
// Root ignores file permissions, so chmod is no test here.
#include <signal.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/store.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Store> OpenStore(const std::string& path,
                                 int64_t min_free_bytes = 0) {
  Store::Options options;
  options.path = path;
  options.health_timeout_ms = 200;
  options.min_free_bytes = min_free_bytes;
  auto store = Store::Open(options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

// The health row's write count, read through a separate connection.
int64_t HealthWrites(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT writes FROM health WHERE id = 1", -1,
                               &stmt, nullptr),
            SQLITE_OK);
  int64_t writes = 0;
  if (sqlite3_step(stmt) == SQLITE_ROW) writes = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return writes;
}

class StoreHealthTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  std::string path_ = dir_.path() + "/kbd.db";
};

TEST_F(StoreHealthTest, WritesAndCachesForOneSecond) {
  auto store = OpenStore(path_);
  ASSERT_NE(store, nullptr);
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(store->CheckWritableAt(t0).ok());
  EXPECT_EQ(HealthWrites(path_), 1);
  ASSERT_TRUE(store->CheckWritableAt(t0 + absl::Milliseconds(900)).ok());
  EXPECT_EQ(HealthWrites(path_), 1);  // From the cache.
  ASSERT_TRUE(store->CheckWritableAt(t0 + absl::Milliseconds(1100)).ok());
  EXPECT_EQ(HealthWrites(path_), 2);
  ASSERT_TRUE(store->CheckWritable().ok());
}

TEST_F(StoreHealthTest, InMemoryStoreIsWritable) {
  auto store = OpenStore(":memory:");
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->CheckWritable().ok());
}

TEST_F(StoreHealthTest, LockedByAnotherProcessIsUnavailableWithinTheTimeout) {
  auto store = OpenStore(path_);
  ASSERT_NE(store, nullptr);
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other,
                         "BEGIN IMMEDIATE; INSERT INTO sources(digest, text, "
                         "created_ms) VALUES('x', 'y', 1)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  const absl::Time start = absl::Now();
  const absl::Status s = store->CheckWritableAt(start);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(s.message(), HasSubstr("cannot be written"));
  EXPECT_THAT(s.message(), HasSubstr("locked"));
  // Cached: a second probe within the second does not wait again.
  const absl::Time again = absl::Now();
  EXPECT_FALSE(store->CheckWritableAt(start + absl::Milliseconds(500)).ok());
  EXPECT_LT(absl::Now() - again, absl::Milliseconds(100));
  ASSERT_EQ(sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(other);
  EXPECT_TRUE(store->CheckWritableAt(start + absl::Seconds(2)).ok());
}

TEST_F(StoreHealthTest, ProbesDuringARefreshAnswerFromTheLastResult) {
  auto store = OpenStore(path_);
  ASSERT_NE(store, nullptr);
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(store->CheckWritableAt(t0).ok());
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other,
                         "BEGIN IMMEDIATE; INSERT INTO sources(digest, text, "
                         "created_ms) VALUES('x', 'y', 1)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  // A refresh that waits out the 200 ms lock timeout ...
  absl::Status refreshed;
  std::thread refresher(
      [&] { refreshed = store->CheckWritableAt(t0 + absl::Seconds(2)); });
  absl::SleepFor(absl::Milliseconds(50));
  // ... does not hold up another probe, which gets the last answer.
  const absl::Time start = absl::Now();
  EXPECT_TRUE(store->CheckWritableAt(t0 + absl::Seconds(2)).ok());
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(50));
  refresher.join();
  EXPECT_EQ(refreshed.code(), absl::StatusCode::kUnavailable);
  sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_close(other);
}

TEST_F(StoreHealthTest, FilesThatCannotGrowMakeItUnwritable) {
  // RLIMIT_FSIZE binds root too: every write past byte 1 of a file fails,
  // as on a full disk.
  auto store = OpenStore(path_);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->CheckWritableAt(absl::Now()).ok());
  struct rlimit old_limit {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  sighandler_t old_handler = signal(SIGXFSZ, SIG_IGN);
  struct rlimit tiny = old_limit;
  tiny.rlim_cur = 1;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &tiny), 0);
  const absl::Status s = store->CheckWritableAt(absl::Now() + absl::Seconds(5));
  // Also what a job write meets.
  const absl::Status put = store->PutSource("big", std::string(64 << 10, 'x'));
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  signal(SIGXFSZ, old_handler);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(s.message(), HasSubstr("cannot be written"));
  EXPECT_FALSE(put.ok());
  // Back to normal once the files may grow again.
  EXPECT_TRUE(store->CheckWritableAt(absl::Now() + absl::Seconds(10)).ok());
}

TEST_F(StoreHealthTest, TooLittleFreeSpaceIsResourceExhausted) {
  // More than any disk here holds.
  auto store = OpenStore(path_, int64_t{1} << 62);
  ASSERT_NE(store, nullptr);
  const absl::Status s = store->CheckWritableAt(absl::Now());
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(s.message(), HasSubstr("bytes free"));
  EXPECT_THAT(s.message(), HasSubstr(dir_.path()));
}

// A tmpfs of `size` mounted on a fresh directory; unmounted by the
// destructor. ok() is false where this process may not mount.
class TinyTmpfs {
 public:
  explicit TinyTmpfs(const std::string& size) {
    ok_ = mount("tmpfs", dir_.path().c_str(), "tmpfs", 0,
                absl::StrCat("size=", size).c_str()) == 0;
  }
  ~TinyTmpfs() {
    if (ok_) umount2(dir_.path().c_str(), MNT_DETACH);
  }
  bool ok() const { return ok_; }
  const std::string& path() const { return dir_.path(); }
  bool RemountReadOnly() {
    return mount("tmpfs", dir_.path().c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY,
                 nullptr) == 0;
  }

 private:
  testing::TempDir dir_;
  bool ok_ = false;
};

TEST(StoreHealthFsTest, FullFileSystemIsNotWritable) {
  TinyTmpfs fs("40m");
  if (!fs.ok()) GTEST_SKIP() << "cannot mount a tmpfs here";
  const std::string path = fs.path() + "/kbd.db";
  auto store = OpenStore(path, int64_t{4} << 20);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->CheckWritableAt(absl::Now()).ok());
  // Fill the file system with the store's own rows, as a busy kbd would.
  absl::Status put;
  for (int i = 0; i < 1000 && put.ok(); ++i) {
    put = store->PutSource(absl::StrCat("d", i), std::string(256 << 10, 'a'));
  }
  ASSERT_FALSE(put.ok()) << "40 MiB never filled";
  const absl::Status s = store->CheckWritableAt(absl::Now() + absl::Seconds(5));
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("cannot be written"));
}

TEST(StoreHealthFsTest, ReadOnlyFileSystemIsNotWritable) {
  TinyTmpfs fs("8m");
  if (!fs.ok()) GTEST_SKIP() << "cannot mount a tmpfs here";
  const std::string path = fs.path() + "/kbd.db";
  { ASSERT_NE(OpenStore(path), nullptr); }
  // A remount needs no file open for writing, as when the kernel turns a
  // file system read-only after errors, or an operator does.
  ASSERT_TRUE(fs.RemountReadOnly());
  Store::Options options;
  options.path = path;
  options.min_free_bytes = 0;
  auto store = Store::Open(options);
  if (!store.ok()) {
    // Refusing to start is fine too, as long as it says where and why.
    EXPECT_THAT(store.status().message(), HasSubstr(path));
    EXPECT_THAT(store.status().message(), HasSubstr("read-write"));
    return;
  }
  const absl::Status s = (*store)->CheckWritable();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(s.message(), HasSubstr("cannot be written"));
}

}  // namespace
}  // namespace kbench
