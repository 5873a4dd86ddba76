// Tests of Store (server/store/store.h) against rows that cannot be read back,
// as an attacker or an older kbd left them (written here through a raw SQLite
// connection): lists skip them, GetJob salvages, recovery marks unfinished
// ones failed, each is logged once and counted; and writes that would make
// such a row are refused with INVALID_ARGUMENT naming the field. Also the
// UTF-8 helpers, checked against protobuf's own parser.
#include <sqlite3.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/stubs/logging.h"
#include "gtest/gtest.h"
#include "server/store/store.h"
#include "spdlog/sinks/ringbuffer_sink.h"
#include "spdlog/spdlog.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A raw connection to the database file, for writing rows the Store would
// refuse. Values are bound as blobs (b:...) or text.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
    sqlite3_busy_timeout(db_, 5000);
  }
  ~RawDb() { sqlite3_close(db_); }
  struct Value {
    std::string bytes;
    bool blob = false;
  };
  static Value Blob(std::string b) { return {std::move(b), true}; }
  static Value Text(std::string t) { return {std::move(t), false}; }
  void Exec(const std::string& sql, const std::vector<Value>& values = {}) {
    sqlite3_stmt* stmt = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db_);
    for (size_t i = 0; i < values.size(); ++i) {
      const Value& v = values[i];
      if (v.blob) {
        sqlite3_bind_blob(stmt, i + 1, v.bytes.data(), v.bytes.size(),
                          SQLITE_TRANSIENT);
      } else {
        sqlite3_bind_text(stmt, i + 1, v.bytes.data(), v.bytes.size(),
                          SQLITE_TRANSIENT);
      }
    }
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    }
    EXPECT_EQ(rc, SQLITE_DONE) << sqlite3_errmsg(db_);
    sqlite3_finalize(stmt);
  }
  // Inserts a job row whose proto is `blob`.
  void InsertJob(const std::string& id, const std::string& blob,
                 v1::Stage stage, int64_t created_ms,
                 const std::string& session = "") {
    Exec(absl::StrCat("INSERT INTO jobs(id, kind, stage, verdict, session_id, "
                      "problem, source_digest, created_ms, updated_ms, job, "
                      "request) VALUES(?1, 1, ",
                      stage, ", 0, ?2, 'gather_linear_fp32', 'd', ", created_ms,
                      ", ", created_ms, ", ?3, x'')"),
         {Text(id), Text(session), Blob(blob)});
  }

 private:
  sqlite3* db_ = nullptr;
};

// The attack: a job whose session id holds a raw 0xff byte. Protobuf
// serializes it, but the bytes do not parse back.
constexpr char kBadSession[] = "s-\xff-1";

v1::Job MakeJob(const std::string& id, int64_t created_ms,
                v1::Stage stage = v1::STAGE_QUEUED) {
  v1::Job job;
  job.set_id(id);
  job.set_kind(v1::JOB_KIND_COMPILE);
  job.set_stage(stage);
  job.set_problem("gather_linear_fp32");
  job.set_created_unix_ms(created_ms);
  job.set_updated_unix_ms(created_ms);
  return job;
}

std::string PoisonedJobBlob(const std::string& id, int64_t created_ms) {
  v1::Job job = MakeJob(id, created_ms);
  job.set_session_id(kBadSession);
  return job.SerializeAsString();
}

class StoreRowsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.path() + "/kbd.db";
    Store::Options options;
    options.path = path_;
    auto store = Store::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    raw_ = std::make_unique<RawDb>(path_);
    // Capture what the store logs.
    sink_ = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000);
    previous_ = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("t", sink_));
  }
  void TearDown() override { spdlog::set_default_logger(previous_); }

  int LogLinesWith(const std::string& needle) {
    int n = 0;
    for (const std::string& line : sink_->last_formatted()) {
      if (line.find(needle) != std::string::npos) ++n;
    }
    return n;
  }

  testing::TempDir dir_;
  std::string path_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<RawDb> raw_;
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(StoreRowsTest, PoisonedBlobReallyDoesNotParse) {
  // The premise of the other tests.
  v1::Job back;
  EXPECT_FALSE(back.ParseFromString(PoisonedJobBlob("j-bad", 1)));
}

TEST_F(StoreRowsTest, ListJobsSkipsUnreadableRowsAndPagesThroughTheRest) {
  // Good and bad rows interleaved, newest first: g5 b4 g3 b2 g1 b0.
  for (int i = 0; i < 6; ++i) {
    if (i % 2 == 1) {
      ASSERT_TRUE(store_
                      ->InsertJob(MakeJob(absl::StrCat("g", i), 100 + i),
                                  v1::KernelRequest())
                      .ok());
    } else {
      raw_->InsertJob(absl::StrCat("b", i),
                      i == 0 ? std::string("\xff\xff\xff garbage")
                             : PoisonedJobBlob(absl::StrCat("b", i), 100 + i),
                      v1::STAGE_DONE, 100 + i);
    }
  }
  std::vector<std::string> seen;
  Store::JobQuery q;
  q.page_size = 2;
  for (int pages = 0; pages < 10; ++pages) {
    auto page = store_->ListJobs(q);
    ASSERT_TRUE(page.ok()) << page.status();
    for (const v1::Job& j : page->jobs) seen.push_back(j.id());
    if (page->next_page_token.empty()) break;
    q.page_token = page->next_page_token;
  }
  EXPECT_THAT(seen, ::testing::ElementsAre("g5", "g3", "g1"));
  EXPECT_EQ(store_->stats().unreadable_rows, 3);
  // Read again: counted again, logged once per row.
  q.page_token.clear();
  q.page_size = 20;
  ASSERT_TRUE(store_->ListJobs(q).ok());
  EXPECT_EQ(store_->stats().unreadable_rows, 6);
  EXPECT_EQ(LogLinesWith("unreadable jobs row 'b4'"), 1);
  EXPECT_EQ(LogLinesWith("unreadable jobs row"), 3);
}

int protobuf_errors = 0;
void CountProtobufErrors(google::protobuf::LogLevel level, const char*, int,
                         const std::string&) {
  if (level >= google::protobuf::LOGLEVEL_ERROR) ++protobuf_errors;
}

TEST_F(StoreRowsTest, KnownUnreadableRowsAreNotParsedAgain) {
  // Protobuf logs every failed UTF-8 check; a polled bad row must not
  // flood the log.
  raw_->InsertJob("b1", PoisonedJobBlob("b1", 1), v1::STAGE_DONE, 1);
  protobuf_errors = 0;
  google::protobuf::LogHandler* previous =
      google::protobuf::SetLogHandler(&CountProtobufErrors);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(store_->ListJobs({}).ok());
    ASSERT_TRUE(store_->GetJob("b1").ok());
  }
  google::protobuf::SetLogHandler(previous);
  EXPECT_EQ(protobuf_errors, 1);
  EXPECT_EQ(store_->stats().unreadable_rows, 10);
  // Once rewritten by the store, the row is read (and parses) again.
  ASSERT_TRUE(store_->UpdateJob(MakeJob("b1", 1, v1::STAGE_DONE)).ok());
  auto page = store_->ListJobs({});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->jobs.size(), 1u);
  EXPECT_EQ(page->jobs[0].id(), "b1");
}

TEST_F(StoreRowsTest, GetJobSalvagesTheIndexedColumns) {
  raw_->InsertJob("j-bad", PoisonedJobBlob("j-bad", 1234), v1::STAGE_RUNNING,
                  1234, kBadSession);
  auto job = store_->GetJob("j-bad");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->id(), "j-bad");
  EXPECT_EQ(job->stage(), v1::STAGE_DONE);
  EXPECT_EQ(job->result().verdict(), v1::VERDICT_ERROR);
  EXPECT_EQ(job->result().error().code(),
            static_cast<int>(absl::StatusCode::kDataLoss));
  EXPECT_THAT(job->result().message(), HasSubstr("could not be read"));
  EXPECT_EQ(job->created_unix_ms(), 1234);
  EXPECT_EQ(job->session_id(), "s-\xEF\xBF\xBD-1");
  // What is returned can be sent: it parses back.
  v1::Job back;
  EXPECT_TRUE(back.ParseFromString(job->SerializeAsString()));
  EXPECT_EQ(LogLinesWith("j-bad"), 1);
}

TEST_F(StoreRowsTest, RecoveryMarksUnreadableUnfinishedJobsFailed) {
  ASSERT_TRUE(
      store_->InsertJob(MakeJob("j-good", 1), v1::KernelRequest()).ok());
  raw_->InsertJob("j-bad", PoisonedJobBlob("j-bad", 2), v1::STAGE_COMPILING, 2,
                  kBadSession);
  raw_->InsertJob("j-junk", "\x0a\xff", v1::STAGE_QUEUED, 3);
  auto unfinished = store_->ListUnfinishedJobs();
  ASSERT_TRUE(unfinished.ok()) << unfinished.status();
  ASSERT_EQ(unfinished->size(), 1u);
  EXPECT_EQ((*unfinished)[0].id(), "j-good");
  EXPECT_EQ(store_->stats().repaired_jobs, 2);
  // Rewritten: they now read back without salvage, finished.
  const int64_t unreadable = store_->stats().unreadable_rows;
  for (const char* id : {"j-bad", "j-junk"}) {
    auto job = store_->GetJob(id);
    ASSERT_TRUE(job.ok()) << job.status();
    EXPECT_EQ(job->stage(), v1::STAGE_DONE) << id;
    EXPECT_EQ(job->result().error().code(),
              static_cast<int>(absl::StatusCode::kDataLoss));
  }
  EXPECT_EQ(store_->stats().unreadable_rows, unreadable);
  // A second recovery finds nothing more to do.
  unfinished = store_->ListUnfinishedJobs();
  ASSERT_TRUE(unfinished.ok());
  EXPECT_EQ(unfinished->size(), 1u);
  EXPECT_EQ(store_->stats().repaired_jobs, 2);
  // And a list of everything is readable.
  auto page = store_->ListJobs({});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->jobs.size(), 3u);
}

TEST_F(StoreRowsTest, WritesThatWouldNotReadBackAreRefused) {
  v1::Job job = MakeJob("j-1", 1);
  job.set_session_id(kBadSession);
  absl::Status s = store_->InsertJob(job, v1::KernelRequest());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("kbench.v1.Job.session_id"));
  EXPECT_EQ(store_->GetJob("j-1").status().code(), absl::StatusCode::kNotFound);

  v1::KernelRequest request;
  request.set_session_id(kBadSession);
  s = store_->InsertJob(MakeJob("j-2", 1), request);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("KernelRequest.session_id"));

  // Nested deep in the result: a compile diagnostic.
  ASSERT_TRUE(store_->InsertJob(MakeJob("j-3", 1), v1::KernelRequest()).ok());
  v1::Job done = MakeJob("j-3", 1, v1::STAGE_DONE);
  done.mutable_result()->mutable_compile()->add_diagnostics()->set_message(
      "bad \xc0\x80 overlong");
  s = store_->UpdateJob(done);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("kbench.v1.Diagnostic.message"));
  EXPECT_EQ(store_->GetJob("j-3")->stage(), v1::STAGE_QUEUED);

  EXPECT_EQ(store_->PutSource("d", "int x; // \xff").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->TouchSession(kBadSession, "", 1).code(),
            absl::StatusCode::kInvalidArgument);
  v1::Turn turn;
  turn.set_session_id("s-1");
  turn.set_message("verdict \xff");
  EXPECT_EQ(store_->AppendTurn(turn).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->GetSession("s-1").status().code(),
            absl::StatusCode::kNotFound);
  v1::CompileReport report;
  report.set_log("\xfe");
  EXPECT_EQ(store_->PutCompiled("k", report, "").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->stats().refused_writes, 7);
  EXPECT_EQ(store_->stats().unreadable_rows, 0);
}

TEST_F(StoreRowsTest, SessionsAndTurnsWithBadTextAreSkipped) {
  ASSERT_TRUE(store_->TouchSession("s-good", "gather_linear_fp32", 10).ok());
  raw_->Exec(
      "INSERT INTO sessions(id, problem, status, created_ms, updated_ms, "
      "turns) VALUES(?1, '', 'open', 20, 20, 0)",
      {RawDb::Text(kBadSession)});
  raw_->Exec(
      "INSERT INTO sessions(id, problem, status, created_ms, updated_ms, "
      "turns) VALUES('s-odd', ?1, 'open', 30, 30, 0)",
      {RawDb::Text("prob\xff")});
  auto sessions = store_->ListSessions(10);
  ASSERT_TRUE(sessions.ok()) << sessions.status();
  ASSERT_EQ(sessions->size(), 1u);
  EXPECT_EQ((*sessions)[0].id(), "s-good");
  // One asked for by its (valid) id comes back scrubbed.
  auto odd = store_->GetSession("s-odd");
  ASSERT_TRUE(odd.ok()) << odd.status();
  EXPECT_TRUE(IsValidUtf8(odd->problem()));

  v1::Turn turn;
  turn.set_session_id("s-good");
  turn.set_tool("compile_kernel");
  ASSERT_TRUE(store_->AppendTurn(turn).ok());
  raw_->Exec(
      "INSERT INTO turns(session_id, seq, tool, job_id, duration_ms, "
      "source_digest, verdict, created_ms, message) VALUES('s-good', 2, "
      "'compile_kernel', 'j', 1, 'd', 0, 40, ?1)",
      {RawDb::Text("\xff\xfe")});
  ASSERT_TRUE(store_->AppendTurn(turn).ok());  // seq 3.
  auto turns = store_->ListTurns("s-good");
  ASSERT_TRUE(turns.ok()) << turns.status();
  ASSERT_EQ(turns->size(), 2u);
  EXPECT_EQ((*turns)[0].seq(), 1);
  EXPECT_EQ((*turns)[1].seq(), 3);
  EXPECT_EQ(store_->stats().unreadable_rows, 4);
}

TEST_F(StoreRowsTest, UnreadableCompileCacheEntryIsAMiss) {
  raw_->Exec(
      "INSERT INTO compile_cache(key, report, cubin, created_ms, "
      "last_used_ms) VALUES('k', ?1, x'00', 1, 1)",
      {RawDb::Blob("\xff\xff")});
  auto entry = store_->GetCompiled("k");
  ASSERT_TRUE(entry.ok()) << entry.status();
  EXPECT_FALSE(entry->has_value());
  EXPECT_EQ(store_->stats().unreadable_rows, 1);
  // The next compile's result replaces it.
  v1::CompileReport report;
  report.set_success(true);
  ASSERT_TRUE(store_->PutCompiled("k", report, "bin").ok());
  entry = store_->GetCompiled("k");
  ASSERT_TRUE(entry.ok() && entry->has_value());
  EXPECT_EQ((*entry)->cubin, "bin");
}

TEST(Utf8Test, AgreesWithTheProtobufParser) {
  const std::vector<std::string> samples = {
      "",
      "plain",
      "caf\xc3\xa9",
      "\xe2\x82\xac",
      "\xf0\x9f\x98\x80",
      "\xff",
      "\xc0\x80",          // Overlong NUL.
      "\xe0\x80\xaf",      // Overlong '/'.
      "\xed\xa0\x80",      // UTF-16 surrogate.
      "\xf4\x90\x80\x80",  // Above U+10FFFF.
      "\xe2\x82",          // Truncated.
      "a\x80",
      "\xf8\x88\x80\x80\x80",
      std::string("nul\0in", 6)};
  for (const std::string& s : samples) {
    v1::Job job;
    job.set_session_id(s);
    v1::Job back;
    const bool parses = back.ParseFromString(job.SerializeAsString());
    EXPECT_EQ(IsValidUtf8(s), parses) << absl::CHexEscape(s);
    const std::string scrubbed = ScrubUtf8(s);
    EXPECT_TRUE(IsValidUtf8(scrubbed)) << absl::CHexEscape(s);
    if (parses) {
      EXPECT_EQ(scrubbed, s);
    }
    EXPECT_EQ(FindNonUtf8Field(job).empty(), parses);
  }
}

TEST(Utf8Test, FindNonUtf8FieldWalksRepeatedAndNestedFields) {
  v1::Job job;
  job.mutable_result()->mutable_compile()->add_options("-O3");
  EXPECT_THAT(FindNonUtf8Field(job), IsEmpty());
  job.mutable_result()->mutable_compile()->add_options("-D\xff");
  EXPECT_EQ(FindNonUtf8Field(job), "kbench.v1.CompileReport.options");
}

}  // namespace
}  // namespace kbench
