// kbd against a poisoned store, as the X-Kbench-Session "\xff" attack left
// it on main (rows written here straight into kbench.db while kbd is
// stopped): kbd starts, recovery marks the unreadable unfinished job failed
// instead of aborting, ListJobs, GetJob, CancelJob, the sessions and the
// dashboard's /api/jobs and /api/sessions keep answering, and each bad row
// is logged once. Also /healthz answers 503 while the store's disk is full
// (a tiny tmpfs, where this process may mount one) and 200 again after.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <sqlite3.h>
#include <sys/mount.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::kbench::testing::KbdProcess;
using ::kbench::testing::ReadSourceFile;
using ::kbench::testing::TempDir;
using ::testing::HasSubstr;

constexpr char kBadSession[] = "s-\xff-attack";

// Runs `sql` with `blobs` bound as ?1, ?2, ... on the database file.
void Poison(const std::string& path, const std::string& sql,
            const std::vector<std::string>& blobs) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  for (size_t i = 0; i < blobs.size(); ++i) {
    sqlite3_bind_blob(stmt, i + 1, blobs[i].data(), blobs[i].size(),
                      SQLITE_TRANSIENT);
  }
  EXPECT_EQ(sqlite3_step(stmt), SQLITE_DONE) << sqlite3_errmsg(db);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

// Now, in ms: older rows would be pruned by retention at start.
int64_t NowMs() { return absl::ToUnixMillis(absl::Now()); }

std::string InsertJobSql(const std::string& id, int stage) {
  return absl::StrCat(
      "INSERT INTO jobs(id, kind, stage, verdict, session_id, problem, "
      "source_digest, created_ms, updated_ms, job, request) VALUES('",
      id, "', 1, ", stage,
      ", 0, CAST(?2 AS TEXT), 'gather_linear_fp32', 'nope', ", NowMs(), ", ",
      NowMs(), ", ?1, x'')");
}

class StorePoisonTest : public ::testing::Test {
 protected:
  void Start() {
    KbdProcess::Options options;
    options.data_dir = data_.path();
    auto kbd = KbdProcess::Start(options);
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = *std::move(kbd);
    stub_ = v1::Kbench::NewStub(grpc::CreateChannel(
        kbd_->address(), grpc::InsecureChannelCredentials()));
    const std::string& a = kbd_->http_address();
    http_ = std::make_unique<httplib::Client>(
        a.substr(0, a.rfind(':')), std::stoi(a.substr(a.rfind(':') + 1)));
  }
  std::unique_ptr<grpc::ClientContext> Ctx() {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() +
                      std::chrono::seconds(30));
    return ctx;
  }
  int CountInLog(const std::string& needle) {
    const std::string log = kbd_->Log();
    int n = 0;
    for (size_t at = log.find(needle); at != std::string::npos;
         at = log.find(needle, at + 1)) {
      ++n;
    }
    return n;
  }

  TempDir data_;
  std::unique_ptr<KbdProcess> kbd_;
  std::unique_ptr<v1::Kbench::Stub> stub_;
  std::unique_ptr<httplib::Client> http_;
};

TEST_F(StorePoisonTest, KbdStartsAndServesAroundUnreadableRows) {
  // A good job in a good session, then stop.
  ASSERT_NO_FATAL_FAILURE(Start());
  v1::CompileKernelRequest compile;
  compile.mutable_kernel()->set_source(
      ReadSourceFile("kernels/examples/gather_linear_naive.cu"));
  compile.mutable_kernel()->set_session_id("s-good");
  v1::CompileKernelResponse compiled;
  ASSERT_TRUE(stub_->CompileKernel(Ctx().get(), compile, &compiled).ok());
  ASSERT_EQ(kbd_->Stop(), 0);

  // The attack's rows: an unfinished job whose session id is not UTF-8
  // (the proto serializes, but does not parse back), a finished job that is
  // garbage, a session and a turn with non-UTF-8 text.
  const std::string db = data_.path() + "/kbench.db";
  v1::Job stuck;
  stuck.set_id("j-stuck");
  stuck.set_kind(v1::JOB_KIND_COMPILE);
  stuck.set_stage(v1::STAGE_COMPILING);
  stuck.set_session_id(kBadSession);
  stuck.set_created_unix_ms(NowMs());
  Poison(db, InsertJobSql("j-stuck", v1::STAGE_COMPILING),
         {stuck.SerializeAsString(), kBadSession});
  Poison(db, InsertJobSql("j-junk", v1::STAGE_DONE),
         {"\x0a\xff\xff\xff", "s-x"});
  const std::string now = absl::StrCat(NowMs());
  Poison(db,
         "INSERT INTO sessions(id, problem, status, created_ms, updated_ms, "
         "turns) VALUES(CAST(?1 AS TEXT), '', 'open', " +
             now + ", " + now + ", 1)",
         {kBadSession});
  Poison(db,
         "INSERT INTO turns(session_id, seq, tool, job_id, duration_ms, "
         "source_digest, verdict, created_ms, message) VALUES('s-good', 99, "
         "'compile_kernel', 'j-junk', 1, 'd', 0, " +
             now + ", CAST(?1 AS TEXT))",
         {"verdict \xff"});

  ASSERT_NO_FATAL_FAILURE(Start());
  EXPECT_THAT(kbd_->Log(), HasSubstr("marked failed"));

  // Every job that can be read is listed, the repaired one among them.
  for (int i = 0; i < 3; ++i) {
    v1::ListJobsRequest list;
    v1::ListJobsResponse jobs;
    grpc::Status s = stub_->ListJobs(Ctx().get(), list, &jobs);
    ASSERT_TRUE(s.ok()) << s.error_message();
    std::vector<std::string> ids;
    for (const v1::Job& j : jobs.jobs()) ids.push_back(j.id());
    EXPECT_THAT(ids, ::testing::Contains("j-stuck"));
    EXPECT_THAT(ids, ::testing::Not(::testing::Contains("j-junk")));
    EXPECT_EQ(ids.size(), 2u);
  }
  // The stuck job is finished, with what happened; cancelling works.
  v1::GetJobRequest get;
  get.set_job_id("j-stuck");
  v1::GetJobResponse got;
  grpc::Status get_status = stub_->GetJob(Ctx().get(), get, &got);
  ASSERT_TRUE(get_status.ok()) << get_status.error_message() << kbd_->Log();
  EXPECT_EQ(got.job().stage(), v1::STAGE_DONE);
  EXPECT_EQ(got.job().result().error().code(),
            static_cast<int>(grpc::StatusCode::DATA_LOSS));
  EXPECT_THAT(got.job().result().message(), HasSubstr("could not be read"));
  for (const char* id : {"j-stuck", "j-junk"}) {
    v1::CancelJobRequest cancel;
    cancel.set_job_id(id);
    v1::CancelJobResponse cancelled;
    grpc::Status s = stub_->CancelJob(Ctx().get(), cancel, &cancelled);
    EXPECT_TRUE(s.ok()) << id << ": " << s.error_message();
    EXPECT_EQ(cancelled.job().stage(), v1::STAGE_DONE) << id;
  }

  // Sessions: the bad one is left out, the good one loses only its bad turn.
  v1::ListSessionsRequest sessions_req;
  v1::ListSessionsResponse sessions;
  ASSERT_TRUE(stub_->ListSessions(Ctx().get(), sessions_req, &sessions).ok());
  ASSERT_EQ(sessions.sessions_size(), 1);
  EXPECT_EQ(sessions.sessions(0).id(), "s-good");
  v1::GetSessionRequest session_req;
  session_req.set_session_id("s-good");
  v1::GetSessionResponse session;
  ASSERT_TRUE(stub_->GetSession(Ctx().get(), session_req, &session).ok());
  EXPECT_EQ(session.turns_size(), 1);

  // The dashboard's polls.
  for (const char* path : {"/api/jobs", "/api/sessions", "/api/jobs/j-stuck",
                           "/api/sessions/s-good", "/healthz"}) {
    httplib::Result res = http_->Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 200) << path << ": " << res->body;
  }
  // Logged once each, however often they were read.
  EXPECT_EQ(CountInLog("unreadable jobs row 'j-junk'"), 1) << kbd_->Log();
  EXPECT_EQ(CountInLog("unreadable sessions row"), 1);
  EXPECT_EQ(CountInLog("unreadable turns row"), 1);
}

TEST(StoreHealthzTest, HealthzIsNotServingWhileTheDiskIsFull) {
  TempDir mount_point;
  if (mount("tmpfs", mount_point.path().c_str(), "tmpfs", 0, "size=48m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here";
  }
  struct Unmount {
    std::string path;
    ~Unmount() { umount2(path.c_str(), MNT_DETACH); }
  } unmount{mount_point.path()};
  KbdProcess::Options options;
  options.data_dir = mount_point.path() + "/data";
  auto kbd = KbdProcess::Start(options);
  ASSERT_TRUE(kbd.ok()) << kbd.status();
  const std::string& a = (*kbd)->http_address();
  httplib::Client http(a.substr(0, a.rfind(':')),
                       std::stoi(a.substr(a.rfind(':') + 1)));
  auto healthz = [&http]() -> int {
    httplib::Result res = http.Get("/healthz");
    return res ? res->status : -1;
  };
  ASSERT_EQ(healthz(), 200);
  // Something else fills the disk.
  const std::string filler = mount_point.path() + "/filler";
  {
    std::ofstream out(filler, std::ios::binary);
    const std::string mib(1 << 20, 'f');
    for (int i = 0; i < 48 && out; ++i) out.write(mib.data(), mib.size());
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  int status = healthz();
  while (status == 200 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));
    status = healthz();
  }
  EXPECT_EQ(status, 503);
  httplib::Result res = http.Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_THAT(res->body, HasSubstr("free"));
  std::remove(filler.c_str());
  const absl::Time back = absl::Now() + absl::Seconds(5);
  while (healthz() != 200 && absl::Now() < back) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_EQ(healthz(), 200);
}

}  // namespace
}  // namespace kbench
