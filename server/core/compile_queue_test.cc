// Tests of CompileService's queue (server/core/compile_service.h) with a fake
// compiler (Options::compile_fn) that blocks until released: per-client
// limits, round-robin order across clients, compiles dropped when every
// caller is gone, and which failures are cached. No NVRTC compile runs (the
// real compiler only makes cache keys).
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/compile_service.h"

namespace kbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A compiler whose sources say how to behave: "slow:<client>:<n>" blocks
// until Release(), anything else returns at once. It records the order of
// the compiles it starts and the most that ran at once per client.
class FakeCompiler {
 public:
  CompileService::CompileFn Fn() {
    return [this](const std::string& source, const std::string&,
                  const std::string&) -> absl::StatusOr<CompileOutput> {
      const std::string client = source.substr(0, source.find(':', 5));
      {
        absl::MutexLock lock(&mu_);
        started_.push_back(source);
        const int now = ++running_[client];
        max_running_[client] = std::max(max_running_[client], now);
      }
      if (absl::StartsWith(source, "slow")) {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(&released_));
      }
      absl::MutexLock lock(&mu_);
      --running_[client];
      auto next = next_status_.find(source);
      if (next != next_status_.end() && !next->second.empty()) {
        absl::Status s = next->second.front();
        next->second.erase(next->second.begin());
        if (!s.ok()) return s;
      }
      CompileOutput out;
      out.report.set_success(true);
      out.report.set_log(source);
      out.cubin = "cubin of " + source;
      return out;
    };
  }
  void Release() {
    absl::MutexLock lock(&mu_);
    released_ = true;
  }
  // The next compiles of `source` fail with these, in order.
  void FailNext(const std::string& source, std::vector<absl::Status> s) {
    absl::MutexLock lock(&mu_);
    next_status_[source] = std::move(s);
  }
  bool WaitStarted(size_t n, absl::Duration timeout = absl::Seconds(10)) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return started_.size() >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
  }
  std::vector<std::string> started() const {
    absl::MutexLock lock(&mu_);
    return started_;
  }
  int max_running(const std::string& client) const {
    absl::MutexLock lock(&mu_);
    auto it = max_running_.find(client);
    return it == max_running_.end() ? 0 : it->second;
  }

 private:
  mutable absl::Mutex mu_;
  bool released_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::string> started_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> running_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> max_running_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<absl::Status>> next_status_
      ABSL_GUARDED_BY(mu_);
};

// Results by tag, shared with the callbacks.
class Results {
 public:
  CompileService::Callback Add(const std::string& tag) {
    return [this, tag](absl::StatusOr<CompileService::Result> r) {
      absl::MutexLock lock(&mu_);
      got_.emplace(tag, r.status());
      if (r.ok()) cached_[tag] = r->report.cached();
    };
  }
  bool Wait(const std::string& tag,
            absl::Duration timeout = absl::Seconds(10)) {
    absl::MutexLock lock(&mu_);
    auto has = [this, &tag]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return got_.count(tag) > 0;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&has), timeout);
  }
  absl::Status Status(const std::string& tag) const {
    absl::MutexLock lock(&mu_);
    auto it = got_.find(tag);
    return it == got_.end() ? absl::UnknownError("no result") : it->second;
  }
  bool Cached(const std::string& tag) const {
    absl::MutexLock lock(&mu_);
    auto it = cached_.find(tag);
    return it != cached_.end() && it->second;
  }
  size_t size() const {
    absl::MutexLock lock(&mu_);
    return got_.size();
  }

 private:
  mutable absl::Mutex mu_;
  std::multimap<std::string, absl::Status> got_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, bool> cached_ ABSL_GUARDED_BY(mu_);
};

class CompileQueueTest : public ::testing::Test {
 protected:
  // The service under test; destroyed in TearDown after the fake is
  // released, so that a failed assertion cannot leave its threads blocked.
  CompileService* Service(int threads, int per_client) {
    CompileService::Options o;
    o.threads = threads;
    o.per_client_running = per_client;
    o.compile_fn = fake_.Fn();
    service_ = std::make_unique<CompileService>(o, &compiler_, nullptr);
    return service_.get();
  }
  static CompileService::Caller As(const std::string& client,
                                   std::function<bool()> gone = nullptr) {
    return CompileService::Caller{client, std::move(gone)};
  }
  void TearDown() override {
    fake_.Release();
    service_.reset();
  }

  NvrtcCompiler compiler_;
  FakeCompiler fake_;
  Results results_;
  std::unique_ptr<CompileService> service_;
};

TEST_F(CompileQueueTest, BombsOfOneClientLeaveThreadsForAnother) {
  // Two threads, one per client: the bomber's four slow compiles hold one
  // thread; the other client's compile runs on the other at once.
  auto service = Service(2, 1);
  for (int i = 0; i < 4; ++i) {
    const std::string s = absl::StrCat("slow:bomber:", i);
    service->Compile(s, "k.cu", "sm_90", As("bomber"), results_.Add(s));
  }
  ASSERT_TRUE(fake_.WaitStarted(1));
  service->Compile("fast:victim:0", "k.cu", "sm_90", As("victim"),
                   results_.Add("victim"));
  ASSERT_TRUE(results_.Wait("victim", absl::Seconds(5)))
      << "the victim's compile waited behind the bomber's";
  EXPECT_TRUE(results_.Status("victim").ok());
  EXPECT_EQ(results_.size(), 1u);  // Every bomb still runs or waits.
  EXPECT_EQ(service->stats().running, 1);
  EXPECT_EQ(service->stats().queued, 3);
  fake_.Release();
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(results_.Wait(absl::StrCat("slow:bomber:", i)));
  }
  EXPECT_EQ(fake_.max_running("slow:bomber"), 1);
}

TEST_F(CompileQueueTest, DefaultPerClientLimitIsHalfTheThreads) {
  auto service = Service(4, 0);
  for (int i = 0; i < 6; ++i) {
    const std::string s = absl::StrCat("slow:a:", i);
    service->Compile(s, "k.cu", "sm_90", As("a"), results_.Add(s));
  }
  ASSERT_TRUE(fake_.WaitStarted(2));
  absl::SleepFor(absl::Milliseconds(200));  // A third would start by now.
  EXPECT_EQ(fake_.started().size(), 2u);
  EXPECT_EQ(service->stats().running, 2);
  fake_.Release();
  for (int i = 0; i < 6; ++i)
    ASSERT_TRUE(results_.Wait(absl::StrCat("slow:a:", i)));
  EXPECT_EQ(fake_.max_running("slow:a"), 2);
}

TEST_F(CompileQueueTest, QueueIsServedRoundRobinAcrossClients) {
  // One thread, held by a slow compile while three clients queue.
  auto service = Service(1, 1);
  service->Compile("slow:gate:0", "k.cu", "sm_90", As("gate"),
                   results_.Add("gate"));
  ASSERT_TRUE(fake_.WaitStarted(1));
  for (int i = 0; i < 3; ++i) {
    const std::string s = absl::StrCat("fast:a:", i);
    service->Compile(s, "k.cu", "sm_90", As("a"), results_.Add(s));
  }
  for (int i = 0; i < 2; ++i) {
    const std::string s = absl::StrCat("fast:b:", i);
    service->Compile(s, "k.cu", "sm_90", As("b"), results_.Add(s));
  }
  service->Compile("fast:c:0", "k.cu", "sm_90", As("c"), results_.Add("c"));
  fake_.Release();
  ASSERT_TRUE(fake_.WaitStarted(7));
  EXPECT_THAT(fake_.started(),
              ElementsAre("slow:gate:0", "fast:a:0", "fast:b:0", "fast:c:0",
                          "fast:a:1", "fast:b:1", "fast:a:2"));
}

TEST_F(CompileQueueTest, CompileOfCallersAllGoneIsDroppedNotRun) {
  auto service = Service(1, 1);
  service->Compile("slow:gate:0", "k.cu", "sm_90", As("a"),
                   results_.Add("gate"));
  ASSERT_TRUE(fake_.WaitStarted(1));
  std::atomic<bool> gone{false};
  auto is_gone = [&gone] { return gone.load(); };
  for (int i = 0; i < 10; ++i) {
    const std::string s = absl::StrCat("fast:a:", i);
    service->Compile(s, "k.cu", "sm_90", As("a", is_gone), results_.Add(s));
  }
  // Merged into fast:a:3 by a caller who stays: that one must run.
  service->Compile("fast:a:3", "k.cu", "sm_90", As("b", [] { return false; }),
                   results_.Add("stays"));
  gone = true;  // Say every deadline passed while the thread was busy.
  fake_.Release();
  for (int i = 0; i < 10; ++i) {
    const std::string tag = absl::StrCat("fast:a:", i);
    ASSERT_TRUE(results_.Wait(tag));
    if (i == 3) {
      EXPECT_TRUE(results_.Status(tag).ok());
    } else {
      EXPECT_EQ(results_.Status(tag).code(), absl::StatusCode::kCancelled)
          << tag;
      EXPECT_THAT(results_.Status(tag).message(), HasSubstr("not run"));
    }
  }
  ASSERT_TRUE(results_.Wait("stays"));
  EXPECT_TRUE(results_.Status("stays").ok());
  EXPECT_THAT(fake_.started(), ElementsAre("slow:gate:0", "fast:a:3"));
  EXPECT_EQ(service->stats().dropped, 9);
  EXPECT_EQ(service->stats().running, 0);
  // Dropped compiles free their client's slot: the next one runs.
  service->Compile("fast:a:new", "k.cu", "sm_90", As("a"), results_.Add("new"));
  ASSERT_TRUE(results_.Wait("new"));
  EXPECT_TRUE(results_.Status("new").ok());
}

TEST_F(CompileQueueTest, CallerAlreadyGoneIsAnsweredAtOnce) {
  auto service = Service(1, 1);
  service->Compile("fast:a:0", "k.cu", "sm_90", As("a", [] { return true; }),
                   results_.Add("a"));
  ASSERT_TRUE(results_.Wait("a", absl::Seconds(1)));
  EXPECT_EQ(results_.Status("a").code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(fake_.started().empty());
}

TEST_F(CompileQueueTest, NonDeterministicFailuresAreNeverCached) {
  auto service = Service(1, 1);
  const std::vector<absl::Status> flaky = {
      absl::UnavailableError("the compiler process was killed by SIGKILL "
                             "from outside kbench; retry the call"),
      absl::InternalError("kbcompile exits right after starting"),
      absl::CancelledError("cancelled"),
      absl::DeadlineExceededError("deadline"),
      absl::ResourceExhaustedError(
          "the compile exceeded its 30 s wall-clock limit and was stopped"),
  };
  fake_.FailNext("fast:a:0", flaky);
  for (size_t i = 0; i <= flaky.size(); ++i) {
    const std::string tag = absl::StrCat("try", i);
    service->Compile("fast:a:0", "k.cu", "sm_90", As("a"), results_.Add(tag));
    ASSERT_TRUE(results_.Wait(tag));
    if (i < flaky.size()) {
      EXPECT_EQ(results_.Status(tag).code(), flaky[i].code()) << i;
    } else {
      EXPECT_TRUE(results_.Status(tag).ok()) << results_.Status(tag);
      EXPECT_FALSE(results_.Cached(tag));
    }
  }
  EXPECT_EQ(fake_.started().size(), flaky.size() + 1);
  EXPECT_EQ(service->stats().not_cached, static_cast<int64_t>(flaky.size()));
  // The success is cached.
  service->Compile("fast:a:0", "k.cu", "sm_90", As("a"), results_.Add("hit"));
  ASSERT_TRUE(results_.Wait("hit"));
  EXPECT_TRUE(results_.Cached("hit"));
  EXPECT_EQ(fake_.started().size(), flaky.size() + 1);
}

TEST_F(CompileQueueTest, CpuAndMemoryLimitHitsAreCached) {
  auto service = Service(1, 1);
  const absl::Status limit = absl::ResourceExhaustedError(
      "the compile exceeded its 20 s CPU-time limit and was stopped");
  fake_.FailNext("fast:a:0", {limit});
  service->Compile("fast:a:0", "k.cu", "sm_90", As("a"), results_.Add("1"));
  ASSERT_TRUE(results_.Wait("1"));
  service->Compile("fast:a:0", "k.cu", "sm_90", As("b"), results_.Add("2"));
  ASSERT_TRUE(results_.Wait("2"));
  EXPECT_EQ(results_.Status("2"), limit);
  EXPECT_EQ(fake_.started().size(), 1u);
  EXPECT_TRUE(CompileService::IsDeterministicFailure(limit));
  EXPECT_FALSE(CompileService::IsDeterministicFailure(
      absl::UnavailableError("killed from outside")));
}

TEST_F(CompileQueueTest, ShutdownAnswersQueuedCallsUnavailable) {
  auto service = Service(1, 1);
  service->Compile("slow:a:0", "k.cu", "sm_90", As("a"), results_.Add("run"));
  ASSERT_TRUE(fake_.WaitStarted(1));
  service->Compile("fast:b:0", "k.cu", "sm_90", As("b"),
                   results_.Add("queued"));
  EXPECT_FALSE(service->shutting_down());
  std::thread stopper([service] { service->Shutdown(); });
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_TRUE(service->shutting_down());
  fake_.Release();
  stopper.join();
  ASSERT_TRUE(results_.Wait("queued"));
  EXPECT_EQ(results_.Status("queued").code(), absl::StatusCode::kUnavailable);
  ASSERT_TRUE(results_.Wait("run"));
  EXPECT_EQ(fake_.started().size(), 1u);
}

}  // namespace
}  // namespace kbench
