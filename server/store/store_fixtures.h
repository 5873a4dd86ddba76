// A test fixture for the Store (server/store/store.h): a fresh temp
// directory per test, a store opened on a file there, and one-value raw
// queries through a second SQLite connection.
#ifndef KBENCH_SERVER_STORE_STORE_FIXTURES_H_
#define KBENCH_SERVER_STORE_STORE_FIXTURES_H_

#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "server/store/store.h"

namespace kbench::testing {

// Owns a fresh temp directory for one test's database files.
class StoreFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "kb_store_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/kbd.db";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Store> OpenStore(int busy_timeout_ms = 5000) {
    Store::Options options;
    options.path = path_;
    options.busy_timeout_ms = busy_timeout_ms;
    auto store = Store::Open(options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  // Runs a one-value query on the database file through a separate raw
  // connection.
  std::string RawQuery(const std::string& sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    std::string value;
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
      value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    EXPECT_TRUE(rc == SQLITE_ROW || rc == SQLITE_DONE) << sqlite3_errmsg(db);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return value;
  }

  std::string dir_;
  std::string path_;
};

}  // namespace kbench::testing

#endif  // KBENCH_SERVER_STORE_STORE_FIXTURES_H_
