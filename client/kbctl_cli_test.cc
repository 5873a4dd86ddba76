// kbctl end to end in-process: flag parsing, exit codes, error messages,
// and the submit / watch / status / list / problems / specs / cancel flows
// against a fake kbench.v1.Kbench service on a loopback port.
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "client/client_fixtures.h"
#include "client/commands.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "testing/process.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kSource[] =
    "// @kb launch gather_linear grid(B) block(256)\n"
    "extern \"C\" __global__ void gather_linear() {}\n";

// A scripted Kbench service: one job, "job-1", whose final state is
// `final_job`.
class FakeKbench final : public v1::Kbench::Service {
 public:
  FakeKbench() {
    final_job_.set_id("job-1");
    final_job_.set_kind(v1::JOB_KIND_SUBMIT);
    final_job_.set_stage(v1::STAGE_DONE);
    final_job_.set_problem("gather_linear_fp32");
    final_job_.mutable_result()->set_verdict(v1::VERDICT_PASSED);
  }

  void SetVerdict(v1::Verdict verdict) {
    absl::MutexLock lock(&mu_);
    final_job_.mutable_result()->set_verdict(verdict);
  }
  // WatchJob sends two updates, then fails with UNAVAILABLE.
  void BreakWatch() {
    absl::MutexLock lock(&mu_);
    break_watch_ = true;
  }
  // WatchJob sends one update, then blocks until the call is cancelled.
  void HangWatch() {
    absl::MutexLock lock(&mu_);
    hang_watch_ = true;
  }
  // GetJob answers "running" this many times before the final job.
  void SetRunningPolls(int n) {
    absl::MutexLock lock(&mu_);
    running_polls_ = n;
  }
  v1::SubmitJobRequest last_submit() {
    absl::MutexLock lock(&mu_);
    return last_submit_;
  }
  v1::ListJobsRequest last_list() {
    absl::MutexLock lock(&mu_);
    return last_list_;
  }
  int get_calls() {
    absl::MutexLock lock(&mu_);
    return get_calls_;
  }
  int submits() {
    absl::MutexLock lock(&mu_);
    return submits_;
  }

  grpc::Status SubmitJob(grpc::ServerContext*, const v1::SubmitJobRequest* req,
                         v1::SubmitJobResponse* resp) override {
    absl::MutexLock lock(&mu_);
    last_submit_ = *req;
    ++submits_;
    final_job_.set_kind(req->kind());
    *resp->mutable_job() = Staged(v1::STAGE_QUEUED);
    return grpc::Status::OK;
  }

  grpc::Status WatchJob(
      grpc::ServerContext* context, const v1::WatchJobRequest* req,
      grpc::ServerWriter<v1::WatchJobResponse>* writer) override {
    v1::WatchJobResponse update;
    bool hang, broken;
    {
      absl::MutexLock lock(&mu_);
      if (req->job_id() != final_job_.id()) {
        return grpc::Status(grpc::StatusCode::NOT_FOUND,
                            "job " + req->job_id() + " not found");
      }
      hang = hang_watch_;
      broken = break_watch_;
      *update.mutable_job() = Staged(v1::STAGE_QUEUED);
    }
    writer->Write(update);
    if (hang) {
      while (!context->IsCancelled()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
    }
    {
      absl::MutexLock lock(&mu_);
      *update.mutable_job() = Staged(v1::STAGE_RUNNING);
      update.mutable_job()->set_stage_detail("trial 1/5 on default/orig");
    }
    writer->Write(update);
    if (broken) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "server restarting");
    }
    {
      absl::MutexLock lock(&mu_);
      *update.mutable_job() = final_job_;
    }
    writer->Write(update);
    return grpc::Status::OK;
  }

  grpc::Status GetJob(grpc::ServerContext*, const v1::GetJobRequest* req,
                      v1::GetJobResponse* resp) override {
    absl::MutexLock lock(&mu_);
    ++get_calls_;
    if (req->job_id() != final_job_.id()) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          "job " + req->job_id() + " not found");
    }
    if (running_polls_ > 0) {
      --running_polls_;
      *resp->mutable_job() = Staged(v1::STAGE_RUNNING);
    } else {
      *resp->mutable_job() = final_job_;
    }
    return grpc::Status::OK;
  }

  grpc::Status ListJobs(grpc::ServerContext*, const v1::ListJobsRequest* req,
                        v1::ListJobsResponse* resp) override {
    absl::MutexLock lock(&mu_);
    last_list_ = *req;
    *resp->add_jobs() = final_job_;
    resp->set_next_page_token("page-2");
    return grpc::Status::OK;
  }

  grpc::Status CancelJob(grpc::ServerContext*, const v1::CancelJobRequest* req,
                         v1::CancelJobResponse* resp) override {
    absl::MutexLock lock(&mu_);
    *resp->mutable_job() = final_job_;
    resp->mutable_job()->mutable_result()->set_verdict(v1::VERDICT_CANCELLED);
    return grpc::Status::OK;
  }

  grpc::Status ListProblems(grpc::ServerContext*,
                            const v1::ListProblemsRequest*,
                            v1::ListProblemsResponse* resp) override {
    resp->add_problems()->set_name("gather_linear_fp32");
    resp->add_problems()->set_name("gather_linear_bf16");
    return grpc::Status::OK;
  }

  grpc::Status GetGpuSpecs(grpc::ServerContext*, const v1::GetGpuSpecsRequest*,
                           v1::GetGpuSpecsResponse*) override {
    return grpc::Status::OK;  // No worker connected.
  }

 private:
  v1::Job Staged(v1::Stage stage) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    v1::Job job = final_job_;
    job.clear_result();
    job.set_stage(stage);
    return job;
  }

  absl::Mutex mu_;
  v1::Job final_job_ ABSL_GUARDED_BY(mu_);
  v1::SubmitJobRequest last_submit_ ABSL_GUARDED_BY(mu_);
  v1::ListJobsRequest last_list_ ABSL_GUARDED_BY(mu_);
  bool break_watch_ ABSL_GUARDED_BY(mu_) = false;
  bool hang_watch_ ABSL_GUARDED_BY(mu_) = false;
  int running_polls_ ABSL_GUARDED_BY(mu_) = 0;
  int get_calls_ ABSL_GUARDED_BY(mu_) = 0;
  int submits_ ABSL_GUARDED_BY(mu_) = 0;
};

using Result = ::kbench::testing::KbctlResult;
Result Kbctl(std::vector<std::string> args) {
  return ::kbench::testing::RunKbctlCommand(std::move(args));
}

class KbctlCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("KBENCH_SERVER");
    unsetenv("KBENCH_SESSION");
    // A directory of its own: ctest runs these tests in parallel processes.
    kernel_path_ = dir_.path() + "/my_kernel.cu";
    std::ofstream(kernel_path_) << kSource;
  }

  kbench::testing::TempDir dir_;
  std::string kernel_path_;
};

class KbctlServerTest : public KbctlCliTest {
 protected:
  void SetUp() override {
    KbctlCliTest::SetUp();
    server_ = std::make_unique<kbench::testing::LoopbackServer>(&service_);
    ASSERT_TRUE(server_->ok());
    address_ = server_->address();
  }

  FakeKbench service_;
  std::unique_ptr<kbench::testing::LoopbackServer> server_;
  std::string address_;
};

TEST_F(KbctlCliTest, NoCommandIsAUsageError) {
  const Result r = Kbctl({});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, StartsWith("kbctl: INVALID_ARGUMENT: "));
  EXPECT_THAT(r.err, HasSubstr("subcommand is required"));
  EXPECT_EQ(r.out, "");
}

TEST_F(KbctlCliTest, MissingFileIsAUsageError) {
  const Result r = Kbctl({"submit"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("kbctl: INVALID_ARGUMENT: FILE is required"));
  EXPECT_EQ(r.out, "");
}

TEST_F(KbctlCliTest, BadFlagsAreUsageErrors) {
  EXPECT_EQ(Kbctl({"check", "--bogus", kernel_path_}).code, 2);
  EXPECT_EQ(Kbctl({"list", "--stage", "sleeping"}).code, 2);
  EXPECT_EQ(Kbctl({"list", "--limit", "0"}).code, 2);
  EXPECT_EQ(Kbctl({"--timeout", "-1", "specs"}).code, 2);
  EXPECT_EQ(Kbctl({"status"}).code, 2);
  EXPECT_EQ(Kbctl({"frobnicate"}).code, 2);
  // --arch belongs to compile only.
  const Result r = Kbctl({"submit", kernel_path_, "--arch", "sm_90"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--arch"));
}

TEST_F(KbctlCliTest, HelpGoesToStdoutAndDocumentsExitCodes) {
  const Result r = Kbctl({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("Exit codes:"));
  EXPECT_THAT(r.out, HasSubstr("1  the kernel's verdict is not passed"));
  EXPECT_THAT(r.out, HasSubstr("2  usage error"));
  EXPECT_THAT(r.out, HasSubstr("submit"));
  EXPECT_EQ(r.err, "");
  const Result sub = Kbctl({"compile", "--help"});
  EXPECT_EQ(sub.code, 0);
  EXPECT_THAT(sub.out, HasSubstr("--arch"));
}

TEST_F(KbctlCliTest, UnreadableFileIsExit2) {
  const Result r = Kbctl({"check", "/nonexistent/dir/k.cu"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "kbctl: NOT_FOUND: cannot read kernel file "
            "'/nonexistent/dir/k.cu': No such file or directory\n");
  EXPECT_EQ(r.out, "");
  const Result dir = Kbctl({"submit", ::testing::TempDir()});
  EXPECT_EQ(dir.code, 2);
  EXPECT_THAT(dir.err, HasSubstr("is a directory"));
}

TEST_F(KbctlCliTest, UnreachableServerIsExit2WithTheAddress) {
  const Result r = Kbctl(
      {"--server", "127.0.0.1:1", "--timeout", "5", "submit", kernel_path_});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, StartsWith("kbctl: UNAVAILABLE: cannot reach kbd at "
                                "127.0.0.1:1 "));
  EXPECT_THAT(r.err, HasSubstr("make demo"));
  EXPECT_EQ(r.out, "");
  const std::vector<std::vector<std::string>> commands = {
      {"specs"}, {"status", "job-1"}, {"watch", "job-1"},
      {"list"},  {"problems"},        {"cancel", "job-1"}};
  for (std::vector<std::string> args : commands) {
    args.insert(args.begin(), {"--server", "127.0.0.1:1", "--timeout", "5"});
    const Result other = Kbctl(args);
    EXPECT_EQ(other.code, 2) << args[4];
    EXPECT_THAT(other.err, HasSubstr("cannot reach kbd at 127.0.0.1:1"))
        << args[4];
  }
}

TEST_F(KbctlCliTest, ServerComesFromTheEnvironment) {
  setenv("KBENCH_SERVER", "127.0.0.1:1", 1);
  const Result r = Kbctl({"--timeout", "5", "specs"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("127.0.0.1:1"));
}

TEST_F(KbctlServerTest, SubmitPassedPrintsTheReport) {
  setenv("KBENCH_SESSION", "sess-7", 1);
  const Result r =
      Kbctl({"--server", address_, "submit", kernel_path_, "--problem",
             "gather_linear_fp32", "--shapes", "odd", "--trials", "3"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("VERDICT: passed (job job-1, submit, "
                                "problem gather_linear_fp32)\n"));
  // Progress goes to stderr, one line per stage change (not a terminal).
  EXPECT_THAT(r.err, HasSubstr("kbctl: job job-1 queued"));
  EXPECT_THAT(r.err, HasSubstr("kbctl: job job-1 running: trial 1/5"));
  EXPECT_THAT(r.out, Not(HasSubstr("kbctl:")));
  const v1::SubmitJobRequest req = service_.last_submit();
  EXPECT_EQ(req.kind(), v1::JOB_KIND_SUBMIT);
  EXPECT_EQ(req.kernel().source(), kSource);
  EXPECT_EQ(req.kernel().filename(), "my_kernel.cu");
  EXPECT_EQ(req.kernel().problem(), "gather_linear_fp32");
  EXPECT_EQ(req.kernel().shape_set(), "odd");
  EXPECT_EQ(req.kernel().session_id(), "sess-7");
  EXPECT_EQ(req.kernel().trials(), 3);
}

TEST_F(KbctlServerTest, VerdictsMapToExitCodes) {
  service_.SetVerdict(v1::VERDICT_FAILED);
  const Result failed = Kbctl({"--server", address_, "check", kernel_path_});
  EXPECT_EQ(failed.code, 1);
  EXPECT_THAT(failed.out,
              StartsWith("VERDICT: failed (job job-1, correctness"));
  EXPECT_EQ(service_.last_submit().kind(), v1::JOB_KIND_CORRECTNESS);
  EXPECT_EQ(service_.last_submit().kernel().session_id(), "");

  service_.SetVerdict(v1::VERDICT_COMPILE_ERROR);
  EXPECT_EQ(Kbctl({"--server", address_, "profile", kernel_path_}).code, 1);
  EXPECT_EQ(service_.last_submit().kind(), v1::JOB_KIND_PROFILE);

  service_.SetVerdict(v1::VERDICT_ERROR);
  const Result error = Kbctl({"--server", address_, "submit", kernel_path_});
  EXPECT_EQ(error.code, 2);
  EXPECT_THAT(error.out, StartsWith("VERDICT: error"));
}

TEST_F(KbctlServerTest, ProfileSendsThePreset) {
  EXPECT_EQ(
      Kbctl({"--server", address_, "profile", kernel_path_, "--preset", "fast"})
          .code,
      0);
  EXPECT_EQ(service_.last_submit().kind(), v1::JOB_KIND_PROFILE);
  EXPECT_EQ(service_.last_submit().kernel().profile_preset(), "fast");
  EXPECT_EQ(Kbctl({"--server", address_, "profile", kernel_path_}).code, 0);
  EXPECT_EQ(service_.last_submit().kernel().profile_preset(), "");
  // Only fast and full; only for profile.
  const Result bad = Kbctl(
      {"--server", address_, "profile", kernel_path_, "--preset", "quick"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--preset"));
  EXPECT_EQ(
      Kbctl({"--server", address_, "submit", kernel_path_, "--preset", "fast"})
          .code,
      2);
}

TEST_F(KbctlServerTest, CompileSendsArchAndSession) {
  const Result r = Kbctl({"--server", address_, "compile", kernel_path_,
                          "--arch", "sm_80", "--session", "s-1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(service_.last_submit().kind(), v1::JOB_KIND_COMPILE);
  EXPECT_EQ(service_.last_submit().kernel().arch(), "sm_80");
  EXPECT_EQ(service_.last_submit().kernel().session_id(), "s-1");
}

TEST_F(KbctlServerTest, NoWaitPrintsTheJobId) {
  const Result r =
      Kbctl({"--server", address_, "submit", kernel_path_, "--no-wait"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "job-1\n");
  EXPECT_EQ(service_.get_calls(), 0);

  // Global flags may follow the command.
  const Result json = Kbctl(
      {"submit", kernel_path_, "--no-wait", "--json", "--server", address_});
  EXPECT_EQ(json.code, 0) << json.err;
  const nlohmann::json parsed = nlohmann::json::parse(json.out);
  EXPECT_EQ(parsed["id"], "job-1");
  EXPECT_EQ(parsed["stage"], "STAGE_QUEUED");
  EXPECT_EQ(parsed["queue_position"], 0);  // Proto names, defaults shown.
  EXPECT_EQ(service_.submits(), 2);
}

TEST_F(KbctlServerTest, JsonReport) {
  const Result r =
      Kbctl({"--server", address_, "--json", "submit", kernel_path_});
  EXPECT_EQ(r.code, 0) << r.err;
  const nlohmann::json parsed = nlohmann::json::parse(r.out);
  EXPECT_EQ(parsed["stage"], "STAGE_DONE");
  EXPECT_EQ(parsed["result"]["verdict"], "VERDICT_PASSED");
}

TEST_F(KbctlServerTest, BrokenWatchFallsBackToPolling) {
  service_.BreakWatch();
  service_.SetRunningPolls(3);
  const Result r = Kbctl({"--server", address_, "submit", kernel_path_});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("VERDICT: passed"));
  EXPECT_THAT(r.err, HasSubstr("watch stream of job job-1 broke "
                               "(UNAVAILABLE: server restarting); polling"));
  // Three "running" answers, then the done one, which is the answer.
  EXPECT_EQ(service_.get_calls(), 4);
}

TEST_F(KbctlServerTest, TheWatchStreamsDoneMessageIsTheAnswer) {
  service_.SetVerdict(v1::VERDICT_FAILED);
  const Result r = Kbctl({"--server", address_, "submit", kernel_path_});
  EXPECT_EQ(r.code, 1) << r.err;
  // The verdict travels only in the DONE message (the earlier updates
  // carry no result), and the job is not fetched again.
  EXPECT_THAT(r.out, StartsWith("VERDICT: failed (job job-1, submit"));
  EXPECT_EQ(service_.get_calls(), 0);
  const Result watch =
      Kbctl({"--server", address_, "--json", "watch", "job-1"});
  EXPECT_EQ(watch.code, 1) << watch.err;
  EXPECT_EQ(nlohmann::json::parse(watch.out)["result"]["verdict"],
            "VERDICT_FAILED");
  EXPECT_EQ(service_.get_calls(), 0);
}

TEST_F(KbctlServerTest, WaitTimeoutSaysHowToFollowTheJob) {
  service_.HangWatch();
  const Result r =
      Kbctl({"--server", address_, "--timeout", "0.5", "submit", kernel_path_});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("kbctl: DEADLINE_EXCEEDED: job job-1 is still "
                               "queued after 500.0 ms (--timeout)"));
  EXPECT_THAT(r.err, HasSubstr("`kbctl cancel job-1`"));
  EXPECT_EQ(r.out, "");
}

TEST_F(KbctlServerTest, StatusWatchAndUnknownJobs) {
  const Result status = Kbctl({"--server", address_, "status", "job-1"});
  EXPECT_EQ(status.code, 0);
  EXPECT_THAT(status.out, StartsWith("VERDICT: passed"));

  const Result watch = Kbctl({"--server", address_, "watch", "job-1"});
  EXPECT_EQ(watch.code, 0) << watch.err;
  EXPECT_THAT(watch.out, StartsWith("VERDICT: passed"));

  const Result missing = Kbctl({"--server", address_, "status", "nope"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(missing.err, "kbctl: NOT_FOUND: job nope not found\n");
  const Result missing_watch = Kbctl({"--server", address_, "watch", "nope"});
  EXPECT_EQ(missing_watch.code, 2);
  EXPECT_EQ(missing_watch.err, "kbctl: NOT_FOUND: job nope not found\n");
}

TEST_F(KbctlServerTest, ListSendsFilters) {
  const Result r =
      Kbctl({"--server", address_, "list", "--stage", "running", "--limit", "5",
             "--session", "s1", "--page-token", "p1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("ID "));
  EXPECT_THAT(r.out, HasSubstr("\njob-1 "));
  EXPECT_THAT(r.out, HasSubstr("more jobs: --page-token page-2\n"));
  const v1::ListJobsRequest req = service_.last_list();
  EXPECT_EQ(req.stage(), v1::STAGE_RUNNING);
  EXPECT_EQ(req.page_size(), 5);
  EXPECT_EQ(req.session_id(), "s1");
  EXPECT_EQ(req.page_token(), "p1");
}

TEST_F(KbctlServerTest, ProblemsSpecsAndCancel) {
  const Result missing =
      Kbctl({"--server", address_, "problems", "matmul_fp8"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(missing.err,
            "kbctl: NOT_FOUND: no problem named 'matmul_fp8'; available: "
            "gather_linear_fp32, gather_linear_bf16\n");

  const Result specs = Kbctl({"--server", address_, "specs"});
  EXPECT_EQ(specs.code, 0);
  EXPECT_THAT(specs.out, StartsWith("no GPU worker is connected"));

  const Result cancel = Kbctl({"--server", address_, "cancel", "job-1"});
  EXPECT_EQ(cancel.code, 0);
  EXPECT_THAT(cancel.out, StartsWith("VERDICT: cancelled (job job-1"));
}

}  // namespace
}  // namespace kbench
