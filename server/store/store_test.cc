// Tests for Store (server/store/store.h) against temp-file and in-memory SQLite
// databases: jobs, pagination, sources, the compile cache, persistence and
// the schema. Sessions and turns: store_sessions_test.cc.
#include "server/store/store.h"

#include <sqlite3.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "server/store/store_fixtures.h"

namespace kbench {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class StoreTest : public testing::StoreFixture {};

v1::Job MakeJob(const std::string& id, int64_t created_ms,
                const std::string& session = "",
                v1::Stage stage = v1::STAGE_QUEUED) {
  v1::Job job;
  job.set_id(id);
  job.set_kind(v1::JOB_KIND_CORRECTNESS);
  job.set_stage(stage);
  job.set_problem("gather_linear_fp32");
  job.set_session_id(session);
  job.set_created_unix_ms(created_ms);
  job.set_updated_unix_ms(created_ms);
  return job;
}

// A job with every field set, result included.
v1::Job FullJob() {
  v1::Job job = MakeJob("job-full", 1700000000123, "sess-1", v1::STAGE_DONE);
  job.set_kind(v1::JOB_KIND_PROFILE);
  job.set_stage_detail("trial 3/5 on odd/b7");
  job.set_shape_set("odd");
  job.set_source_digest(std::string(64, 'a'));
  job.set_filename("kernel.cu");
  job.set_updated_unix_ms(1700000000456);
  job.set_finished_unix_ms(1700000000789);
  job.set_attempts(2);
  job.set_worker_id("host-a/gpu0");
  job.set_queue_position(4);
  v1::JobResult* result = job.mutable_result();
  result->set_verdict(v1::VERDICT_FAILED);
  result->mutable_error()->set_code(3);
  result->mutable_error()->set_message("bad shape");
  v1::CompileReport* compile = result->mutable_compile();
  compile->set_success(true);
  compile->set_arch("sm_90");
  compile->add_options("-O3");
  compile->set_digest(std::string(64, 'b'));
  compile->set_compile_ms(12.5);
  v1::Diagnostic* diag = compile->add_diagnostics();
  diag->set_line(7);
  diag->set_severity("warning");
  diag->set_message("unused variable");
  v1::KernelResources* res = compile->add_kernels();
  res->set_name("k");
  res->set_registers(40);
  compile->mutable_plan()->set_problem("gather_linear_fp32");
  compile->mutable_plan()->add_launches()->add_grid("B");
  v1::CorrectnessReport* corr = result->mutable_correctness();
  corr->set_trials_run(5);
  v1::TrialResult* trial = corr->add_trials();
  trial->set_shape("b7");
  (*trial->mutable_dims())["B"] = 7;
  (*trial->mutable_dims())["K"] = 4096;
  trial->set_seed(0xfffffffffffffff0ull);
  trial->set_max_abs_error(1e-3);
  trial->set_first_mismatch("b=3 k=17");
  result->mutable_timing()->mutable_kernel()->set_median_us(42.25);
  result->mutable_timing()->set_speedup(1.5);
  result->mutable_profile()->add_launches()->add_block(256);
  result->mutable_profile()->set_achieved_gbps(1234.5);
  result->set_worker_id("host-a/gpu0");
  result->mutable_gpu()->set_name("NVIDIA H100");
  result->mutable_gpu()->add_max_block_dims(1024);
  result->set_runner_ms(88.0);
  result->set_log("printf output\n\x01 bytes");
  return job;
}

TEST_F(StoreTest, JobRoundTripKeepsEveryField) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  v1::Job job = FullJob();
  v1::KernelRequest request;
  request.set_source("__global__ void k() {}");
  request.set_filename("kernel.cu");
  request.set_problem("gather_linear_fp32");
  request.set_shape_set("odd");
  request.set_session_id("sess-1");
  request.set_trials(5);
  request.set_budget_ms(2000);
  request.set_arch("sm_90");
  ASSERT_TRUE(store->InsertJob(job, request).ok());

  auto got = store->GetJob("job-full");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(MessageDifferencer::Equals(*got, job))
      << got->DebugString() << "\nvs\n"
      << job.DebugString();

  auto got_request = store->GetJobRequest("job-full");
  ASSERT_TRUE(got_request.ok()) << got_request.status();
  EXPECT_EQ(got_request->source(), "");  // Stored by digest, not here.
  v1::KernelRequest expected = request;
  expected.clear_source();
  EXPECT_TRUE(MessageDifferencer::Equals(*got_request, expected))
      << got_request->DebugString();
}

TEST_F(StoreTest, UpdateJobReplacesStageAndResult) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  v1::Job job = MakeJob("j1", 1000);
  ASSERT_TRUE(store->InsertJob(job, v1::KernelRequest()).ok());

  job.set_stage(v1::STAGE_DONE);
  job.set_updated_unix_ms(2000);
  job.mutable_result()->set_verdict(v1::VERDICT_PASSED);
  job.mutable_result()->set_runner_ms(3.5);
  ASSERT_TRUE(store->UpdateJob(job).ok());

  auto got = store->GetJob("j1");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->stage(), v1::STAGE_DONE);
  EXPECT_EQ(got->updated_unix_ms(), 2000);
  EXPECT_EQ(got->result().verdict(), v1::VERDICT_PASSED);
  EXPECT_DOUBLE_EQ(got->result().runner_ms(), 3.5);
  EXPECT_TRUE(MessageDifferencer::Equals(*got, job));
  // The indexed columns follow the proto.
  EXPECT_EQ(RawQuery("SELECT stage || '/' || verdict || '/' || updated_ms "
                     "FROM jobs WHERE id = 'j1'"),
            "5/1/2000");
}

TEST_F(StoreTest, DuplicateInsertIsAlreadyExists) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->InsertJob(MakeJob("dup", 1), v1::KernelRequest()).ok());
  absl::Status status =
      store->InsertJob(MakeJob("dup", 2), v1::KernelRequest());
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists) << status;
  EXPECT_THAT(status.message(), HasSubstr("job 'dup' already exists"));
  // The first insert is untouched.
  EXPECT_EQ(store->GetJob("dup")->created_unix_ms(), 1);
}

TEST_F(StoreTest, MissingRowsAreNotFoundWithTheId) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto job = store->GetJob("nope");
  EXPECT_EQ(job.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(job.status().message(), "no job 'nope'");
  auto request = store->GetJobRequest("nope");
  EXPECT_EQ(request.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(request.status().message(), "no job 'nope'");
  absl::Status update = store->UpdateJob(MakeJob("ghost", 1));
  EXPECT_EQ(update.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(update.message(), "no job 'ghost'");
  auto session = store->GetSession("s-x");
  EXPECT_EQ(session.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(session.status().message(), "no session 's-x'");
  absl::Status set = store->SetSessionStatus("s-x", "closed");
  EXPECT_EQ(set.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(set.message(), "no session 's-x'");
  auto source = store->GetSource("abc123");
  EXPECT_EQ(source.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(source.status().message(), HasSubstr("'abc123'"));
}

// 45 jobs; every third shares its created time with its neighbours, so the
// id breaks ties.
TEST_F(StoreTest, ListJobsPagesNewestFirstWithoutDuplicates) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  std::vector<std::pair<int64_t, std::string>> all;
  for (int i = 0; i < 45; ++i) {
    std::string id = absl::StrFormat("job-%02d", (i * 17) % 45);
    int64_t created = 1000 + i / 3;
    ASSERT_TRUE(
        store->InsertJob(MakeJob(id, created), v1::KernelRequest()).ok());
    all.emplace_back(created, id);
  }
  std::sort(all.rbegin(), all.rend());  // Newest first, then id descending.

  std::vector<std::string> seen;
  std::vector<size_t> sizes;
  std::vector<std::string> tokens;
  Store::JobQuery query;
  query.page_size = 20;
  do {
    auto page = store->ListJobs(query);
    ASSERT_TRUE(page.ok()) << page.status();
    sizes.push_back(page->jobs.size());
    for (const v1::Job& job : page->jobs) seen.push_back(job.id());
    tokens.push_back(page->next_page_token);
    query.page_token = page->next_page_token;
    ASSERT_LE(sizes.size(), 3u) << "too many pages";
  } while (!query.page_token.empty());

  EXPECT_THAT(sizes, ElementsAre(20u, 20u, 5u));
  EXPECT_FALSE(tokens[0].empty());
  EXPECT_FALSE(tokens[1].empty());
  EXPECT_NE(tokens[0], tokens[1]);
  EXPECT_TRUE(tokens[2].empty());
  std::vector<std::string> expected;
  expected.reserve(all.size());
  for (const auto& entry : all) expected.push_back(entry.second);
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 45u);
}

TEST_F(StoreTest, ListJobsClampsPageSize) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 205; ++i) {
    ASSERT_TRUE(store
                    ->InsertJob(MakeJob(absl::StrFormat("j%03d", i), i),
                                v1::KernelRequest())
                    .ok());
  }
  Store::JobQuery query;
  query.page_size = 1000;
  auto big = store->ListJobs(query);
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(big->jobs.size(), 200u);
  EXPECT_FALSE(big->next_page_token.empty());
  EXPECT_EQ(big->jobs.front().id(), "j204");

  query.page_size = -3;
  auto tiny = store->ListJobs(query);
  ASSERT_TRUE(tiny.ok()) << tiny.status();
  ASSERT_EQ(tiny->jobs.size(), 1u);
  EXPECT_EQ(tiny->jobs[0].id(), "j204");

  query.page_size = 0;  // The default.
  auto dflt = store->ListJobs(query);
  ASSERT_TRUE(dflt.ok()) << dflt.status();
  EXPECT_EQ(dflt->jobs.size(), 20u);

  query.page_size = 200;
  query.page_token = big->next_page_token;
  auto rest = store->ListJobs(query);
  ASSERT_TRUE(rest.ok()) << rest.status();
  ASSERT_EQ(rest->jobs.size(), 5u);
  EXPECT_EQ(rest->jobs.back().id(), "j000");
  EXPECT_TRUE(rest->next_page_token.empty());
}

TEST_F(StoreTest, ListJobsRejectsBadPageTokens) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  for (const std::string& token :
       {std::string("!!not base64!!"), absl::WebSafeBase64Escape("no-colon"),
        absl::WebSafeBase64Escape("abc:job-1"),
        absl::WebSafeBase64Escape("123:")}) {
    Store::JobQuery query;
    query.page_token = token;
    auto page = store->ListJobs(query);
    EXPECT_EQ(page.status().code(), absl::StatusCode::kInvalidArgument)
        << token;
    EXPECT_THAT(page.status().message(), HasSubstr("bad page_token"));
    EXPECT_THAT(page.status().message(), HasSubstr(token));
  }
}

TEST_F(StoreTest, ListJobsFiltersBySessionAndStage) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 30; ++i) {
    std::string session = i % 3 == 0 ? "s-a" : "s-b";
    v1::Stage stage = i % 2 == 0 ? v1::STAGE_DONE : v1::STAGE_WAITING_GPU;
    ASSERT_TRUE(store
                    ->InsertJob(MakeJob(absl::StrFormat("j%02d", i), 100 + i,
                                        session, stage),
                                v1::KernelRequest())
                    .ok());
  }
  Store::JobQuery query;
  query.session_id = "s-a";
  auto by_session = store->ListJobs(query);
  ASSERT_TRUE(by_session.ok()) << by_session.status();
  std::vector<std::string> ids;
  for (const auto& job : by_session->jobs) ids.push_back(job.id());
  EXPECT_THAT(ids, ElementsAre("j27", "j24", "j21", "j18", "j15", "j12", "j09",
                               "j06", "j03", "j00"));

  query.stage = v1::STAGE_DONE;
  auto both = store->ListJobs(query);
  ASSERT_TRUE(both.ok()) << both.status();
  ids.clear();
  for (const auto& job : both->jobs) ids.push_back(job.id());
  EXPECT_THAT(ids, ElementsAre("j24", "j18", "j12", "j06", "j00"));

  // Filter plus pagination.
  query.session_id.clear();
  query.stage = v1::STAGE_WAITING_GPU;
  query.page_size = 10;
  auto first = store->ListJobs(query);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->jobs.size(), 10u);
  EXPECT_EQ(first->jobs.front().id(), "j29");
  query.page_token = first->next_page_token;
  auto second = store->ListJobs(query);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(second->jobs.size(), 5u);
  EXPECT_EQ(second->jobs.back().id(), "j01");
  EXPECT_TRUE(second->next_page_token.empty());

  query = Store::JobQuery();
  query.session_id = "nobody";
  auto none = store->ListJobs(query);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->jobs.empty());
  EXPECT_TRUE(none->next_page_token.empty());
}

TEST_F(StoreTest, ListUnfinishedJobsOldestFirst) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(
      store->InsertJob(MakeJob("c", 30, "", v1::STAGE_RUNNING), {}).ok());
  ASSERT_TRUE(
      store->InsertJob(MakeJob("a", 10, "", v1::STAGE_QUEUED), {}).ok());
  ASSERT_TRUE(store->InsertJob(MakeJob("d", 5, "", v1::STAGE_DONE), {}).ok());
  ASSERT_TRUE(
      store->InsertJob(MakeJob("b", 20, "", v1::STAGE_WAITING_GPU), {}).ok());
  auto jobs = store->ListUnfinishedJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  std::vector<std::string> ids;
  for (const auto& job : *jobs) ids.push_back(job.id());
  EXPECT_THAT(ids, ElementsAre("a", "b", "c"));
}

TEST_F(StoreTest, SourcesStoredOnceByDigest) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  std::string text = "// @kb problem x\n__global__ void k() {}\n";
  ASSERT_TRUE(store->PutSource("d1", text).ok());
  ASSERT_TRUE(store->PutSource("d1", text).ok());  // Idempotent.
  auto got = store->GetSource("d1");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, text);
  EXPECT_EQ(RawQuery("SELECT COUNT(*) FROM sources"), "1");
  EXPECT_EQ(store->PutSource("", text).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(StoreTest, CompileCacheHitMissOverwrite) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto miss = store->GetCompiled("key-1");
  ASSERT_TRUE(miss.ok()) << miss.status();
  EXPECT_FALSE(miss->has_value());

  v1::CompileReport report;
  report.set_success(true);
  report.set_arch("sm_90");
  report.set_cubin_bytes(6);
  std::string cubin(
      "\x7f"
      "ELF\0\x01",
      6);  // Embedded NUL survives.
  ASSERT_TRUE(store->PutCompiled("key-1", report, cubin).ok());
  auto hit = store->GetCompiled("key-1");
  ASSERT_TRUE(hit.ok()) << hit.status();
  ASSERT_TRUE(hit->has_value());
  EXPECT_TRUE(MessageDifferencer::Equals((*hit)->report, report));
  EXPECT_EQ((*hit)->cubin, cubin);

  report.set_arch("sm_100");
  ASSERT_TRUE(store->PutCompiled("key-1", report, "other").ok());
  auto again = store->GetCompiled("key-1");
  ASSERT_TRUE(again.ok() && again->has_value());
  EXPECT_EQ((*again)->report.arch(), "sm_100");
  EXPECT_EQ((*again)->cubin, "other");
  EXPECT_EQ(RawQuery("SELECT COUNT(*) FROM compile_cache"), "1");

  // A hit refreshes last_used_ms.
  RawQuery("UPDATE compile_cache SET last_used_ms = 0");
  ASSERT_EQ(RawQuery("SELECT last_used_ms FROM compile_cache"), "0");
  ASSERT_TRUE(store->GetCompiled("key-1").ok());
  EXPECT_GT(std::stoll(RawQuery("SELECT last_used_ms FROM compile_cache")),
            1600000000000LL);
}

TEST_F(StoreTest, ReopeningTheFileKeepsData) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->InsertJob(FullJob(), v1::KernelRequest()).ok());
    ASSERT_TRUE(store->PutSource("d", "text").ok());
    ASSERT_TRUE(store->PutCompiled("k", v1::CompileReport(), "bin").ok());
    v1::Turn turn;
    turn.set_session_id("s");
    ASSERT_TRUE(store->AppendTurn(turn).ok());
  }
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto job = store->GetJob("job-full");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_TRUE(MessageDifferencer::Equals(*job, FullJob()));
  EXPECT_EQ(*store->GetSource("d"), "text");
  auto compiled = store->GetCompiled("k");
  ASSERT_TRUE(compiled.ok() && compiled->has_value());
  EXPECT_EQ((*compiled)->cubin, "bin");
  EXPECT_EQ(store->GetSession("s")->turns(), 1);
  v1::Turn turn;
  turn.set_session_id("s");
  EXPECT_EQ(store->AppendTurn(turn)->seq(), 2);
}

TEST_F(StoreTest, FileDatabaseUsesWalAndSchemaVersion4) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(RawQuery("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(RawQuery("PRAGMA user_version"), "4");
}

TEST_F(StoreTest, NewerSchemaIsRefused) {
  { ASSERT_NE(OpenStore(), nullptr); }
  RawQuery("PRAGMA user_version = 7");
  Store::Options options;
  options.path = path_;
  auto store = Store::Open(options);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("schema version 7"));
}

TEST_F(StoreTest, OpenInMissingDirectoryNamesThePath) {
  Store::Options options;
  options.path = dir_ + "/missing/kbd.db";
  auto store = Store::Open(options);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(store.status().message(), HasSubstr(options.path));
}

TEST(StoreMemoryTest, InMemoryDatabaseWorks) {
  Store::Options options;
  options.path = ":memory:";
  auto store = Store::Open(options);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->InsertJob(MakeJob("m1", 5), v1::KernelRequest()).ok());
  auto job = (*store)->GetJob("m1");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->created_unix_ms(), 5);
  v1::Turn turn;
  turn.set_session_id("s");
  EXPECT_EQ((*store)->AppendTurn(turn)->seq(), 1);
}

}  // namespace
}  // namespace kbench
