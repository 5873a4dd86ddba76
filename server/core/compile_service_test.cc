// Tests of CompileService (server/core/compile_service.h) with real NVRTC
// compiles (no GPU needed) and a Store in a temp file: results, memory and
// store hits, merging of identical compiles in flight, cache keys, cached
// compile errors, the LRU bound and shutdown.
#include "server/core/compile_service.h"

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/barrier.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

constexpr char kAddOne[] =
    "extern \"C\" __global__ void add_one(float* x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] += 1.0f;\n"
    "}\n";

constexpr char kBroken[] =
    "extern \"C\" __global__ void broken(float* x) {\n"
    "  x[0] = undefined_name;\n"
    "}\n";

// A distinct small kernel per `i`.
std::string Kernel(int i) {
  return absl::StrCat("extern \"C\" __global__ void k", i,
                      "(float* x) { x[threadIdx.x] *= ", i, ".0f; }\n");
}

// Collects the results of Compile calls; shared with the callbacks so they
// may run after the test body.
class Results {
 public:
  // A callback that records into `results`.
  static CompileService::Callback Add(std::shared_ptr<Results> results) {
    return [results](absl::StatusOr<CompileService::Result> r) {
      absl::MutexLock lock(&results->mu_);
      results->results_.push_back(std::move(r));
    };
  }
  // Waits up to 60 s (NVRTC on a loaded machine) for `n` results.
  bool WaitFor(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() { return results_.size() >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(60));
  }
  std::vector<absl::StatusOr<CompileService::Result>> Get() const {
    absl::MutexLock lock(&mu_);
    return results_;
  }
  size_t size() const {
    absl::MutexLock lock(&mu_);
    return results_.size();
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<absl::StatusOr<CompileService::Result>> results_
      ABSL_GUARDED_BY(mu_);
};

class CompileServiceTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = OpenStore(); }

  std::unique_ptr<Store> OpenStore() {
    Store::Options options;
    options.path = dir_.path() + "/kbd.db";
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }

  static CompileService::Options Opts(int threads = 2,
                                      size_t memory_entries = 256) {
    CompileService::Options o;
    o.threads = threads;
    o.memory_entries = memory_entries;
    return o;
  }

  // Compiles and waits for the one result.
  CompileService::Result CompileOne(CompileService& service,
                                    const std::string& source,
                                    const std::string& filename = "kernel.cu",
                                    const std::string& arch = "sm_90") {
    auto results = std::make_shared<Results>();
    service.Compile(source, filename, arch, Results::Add(results));
    EXPECT_TRUE(results->WaitFor(1));
    auto got = results->Get();
    EXPECT_EQ(got.size(), 1u);
    if (got.empty() || !got[0].ok()) {
      ADD_FAILURE() << (got.empty() ? absl::UnknownError("no result")
                                    : got[0].status());
      return {};
    }
    return *got[0];
  }

  testing::TempDir dir_;
  NvrtcCompiler compiler_;
  std::unique_ptr<Store> store_;
};

TEST_F(CompileServiceTest, CompilesOnceAndReportsKernels) {
  CompileService service(Opts(), &compiler_, store_.get());
  auto results = std::make_shared<Results>();
  service.Compile(kAddOne, "kernel.cu", "sm_90", Results::Add(results));
  ASSERT_TRUE(results->WaitFor(1));
  auto got = results->Get();
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0].ok()) << got[0].status();
  const CompileService::Result& r = *got[0];
  EXPECT_TRUE(r.report.success()) << r.report.log();
  EXPECT_FALSE(r.report.cached());
  EXPECT_EQ(r.report.arch(), "sm_90");
  ASSERT_EQ(r.report.kernels_size(), 1);
  EXPECT_EQ(r.report.kernels(0).name(), "add_one");
  EXPECT_GT(r.report.kernels(0).registers(), 0);
  EXPECT_EQ(r.report.digest(), compiler_.CacheKey(kAddOne, "sm_90"));
  ASSERT_NE(r.cubin, nullptr);
  EXPECT_FALSE(r.cubin->empty());
  EXPECT_EQ(static_cast<int64_t>(r.cubin->size()), r.report.cubin_bytes());

  const CompileService::Stats s = service.stats();
  EXPECT_EQ(s.compiles, 1);
  EXPECT_EQ(s.memory_hits, 0);
  EXPECT_EQ(s.store_hits, 0);
  EXPECT_EQ(s.merged, 0);
  // Exactly once, even after a while.
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(results->size(), 1u);
}

TEST_F(CompileServiceTest, SecondIdenticalRequestIsAMemoryHit) {
  CompileService service(Opts(), &compiler_, store_.get());
  const CompileService::Result first = CompileOne(service, kAddOne);
  const CompileService::Result second = CompileOne(service, kAddOne);
  EXPECT_FALSE(first.report.cached());
  EXPECT_TRUE(second.report.cached());
  EXPECT_TRUE(second.report.success());
  EXPECT_EQ(second.report.digest(), first.report.digest());
  ASSERT_EQ(second.report.kernels_size(), 1);
  EXPECT_EQ(second.report.kernels(0).name(), "add_one");
  ASSERT_NE(second.cubin, nullptr);
  ASSERT_NE(first.cubin, nullptr);
  EXPECT_EQ(*second.cubin, *first.cubin);
  const CompileService::Stats s = service.stats();
  EXPECT_EQ(s.compiles, 1);
  EXPECT_EQ(s.memory_hits, 1);
  EXPECT_EQ(s.store_hits, 0);
}

TEST_F(CompileServiceTest, IdenticalConcurrentRequestsCompileOnce) {
  CompileService service(Opts(4), &compiler_, store_.get());
  constexpr int kThreads = 8;
  auto results = std::make_shared<Results>();
  absl::Barrier* start = new absl::Barrier(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      if (start->Block()) delete start;
      service.Compile(kAddOne, "kernel.cu", "sm_90", Results::Add(results));
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(results->WaitFor(kThreads));
  const auto got = results->Get();
  ASSERT_EQ(got.size(), static_cast<size_t>(kThreads));
  std::set<std::string> digests;
  int uncached = 0;
  for (const auto& r : got) {
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->report.success());
    digests.insert(r->report.digest());
    if (!r->report.cached()) ++uncached;
  }
  EXPECT_EQ(digests.size(), 1u);
  EXPECT_EQ(uncached, 1);  // Only the compile's own requester.
  const CompileService::Stats s = service.stats();
  EXPECT_EQ(s.compiles, 1);
  EXPECT_EQ(s.merged + s.memory_hits, kThreads - 1);
  EXPECT_EQ(s.store_hits, 0);
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(results->size(), static_cast<size_t>(kThreads));
}

TEST_F(CompileServiceTest, FilenameAndArchArePartOfTheKey) {
  CompileService service(Opts(), &compiler_, store_.get());
  const std::string base = service.Key(kAddOne, "kernel.cu", "sm_90");
  EXPECT_EQ(service.Key(kAddOne, "kernel.cu", "sm_90"), base);
  EXPECT_NE(service.Key(kAddOne, "other.cu", "sm_90"), base);
  EXPECT_NE(service.Key(kAddOne, "kernel.cu", "sm_80"), base);
  EXPECT_NE(service.Key(Kernel(1), "kernel.cu", "sm_90"), base);

  CompileOne(service, kAddOne, "kernel.cu", "sm_90");
  const CompileService::Result other_name =
      CompileOne(service, kAddOne, "other.cu", "sm_90");
  EXPECT_FALSE(other_name.report.cached());
  const CompileService::Result other_arch =
      CompileOne(service, kAddOne, "kernel.cu", "sm_80");
  EXPECT_FALSE(other_arch.report.cached());
  EXPECT_EQ(other_arch.report.arch(), "sm_80");
  const CompileService::Stats s = service.stats();
  EXPECT_EQ(s.compiles, 3);
  EXPECT_EQ(s.memory_hits, 0);
}

TEST_F(CompileServiceTest, CompileErrorsAreCachedToo) {
  CompileService service(Opts(), &compiler_, store_.get());
  const CompileService::Result first = CompileOne(service, kBroken, "bad.cu");
  EXPECT_FALSE(first.report.success());
  EXPECT_FALSE(first.report.cached());
  ASSERT_GE(first.report.diagnostics_size(), 1);
  EXPECT_EQ(first.report.diagnostics(0).severity(), "error");
  EXPECT_EQ(first.report.diagnostics(0).line(), 2);
  EXPECT_THAT(first.report.diagnostics(0).message(),
              HasSubstr("undefined_name"));

  const CompileService::Result second = CompileOne(service, kBroken, "bad.cu");
  EXPECT_FALSE(second.report.success());
  EXPECT_TRUE(second.report.cached());
  ASSERT_GE(second.report.diagnostics_size(), 1);
  EXPECT_THAT(second.report.diagnostics(0).message(),
              HasSubstr("undefined_name"));
  EXPECT_EQ(service.stats().compiles, 1);
  EXPECT_EQ(service.stats().memory_hits, 1);

  // And in the store, for the next process.
  CompileService fresh(Opts(), &compiler_, store_.get());
  const CompileService::Result third = CompileOne(fresh, kBroken, "bad.cu");
  EXPECT_FALSE(third.report.success());
  EXPECT_TRUE(third.report.cached());
  EXPECT_EQ(fresh.stats().compiles, 0);
  EXPECT_EQ(fresh.stats().store_hits, 1);
}

TEST_F(CompileServiceTest, InvalidArchIsAnErrorForEveryCaller) {
  CompileService service(Opts(), &compiler_, store_.get());
  for (int round = 0; round < 2; ++round) {
    auto results = std::make_shared<Results>();
    service.Compile(kAddOne, "kernel.cu", "sm_9x", Results::Add(results));
    ASSERT_TRUE(results->WaitFor(1));
    const auto got = results->Get();
    ASSERT_EQ(got.size(), 1u);
    ASSERT_FALSE(got[0].ok()) << "round " << round;
    EXPECT_EQ(got[0].status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(got[0].status().message(), HasSubstr("sm_9x"));
  }
  EXPECT_EQ(service.stats().memory_hits, 0);
  EXPECT_EQ(service.stats().store_hits, 0);
}

TEST_F(CompileServiceTest, NewServiceOnTheSameStoreFileGetsAStoreHit) {
  std::string cubin;
  {
    CompileService service(Opts(), &compiler_, store_.get());
    const CompileService::Result r = CompileOne(service, kAddOne);
    ASSERT_NE(r.cubin, nullptr);
    cubin = *r.cubin;
  }
  store_.reset();  // As after a restart.
  std::unique_ptr<Store> reopened = OpenStore();
  ASSERT_NE(reopened, nullptr);
  CompileService service(Opts(), &compiler_, reopened.get());
  const CompileService::Result r = CompileOne(service, kAddOne);
  EXPECT_TRUE(r.report.success());
  EXPECT_TRUE(r.report.cached());
  ASSERT_EQ(r.report.kernels_size(), 1);
  EXPECT_EQ(r.report.kernels(0).name(), "add_one");
  ASSERT_NE(r.cubin, nullptr);
  EXPECT_EQ(*r.cubin, cubin);
  const CompileService::Stats s = service.stats();
  EXPECT_EQ(s.store_hits, 1);
  EXPECT_EQ(s.compiles, 0);
  EXPECT_EQ(s.memory_hits, 0);
  // Now in memory as well.
  EXPECT_TRUE(CompileOne(service, kAddOne).report.cached());
  EXPECT_EQ(service.stats().memory_hits, 1);
  EXPECT_EQ(service.stats().store_hits, 1);
}

TEST_F(CompileServiceTest, MemoryKeepsAtMostMemoryEntries) {
  CompileService service(Opts(2, /*memory_entries=*/2), &compiler_,
                         store_.get());
  CompileOne(service, Kernel(1));  // A
  CompileOne(service, Kernel(2));  // B
  CompileOne(service, Kernel(3));  // C: A drops out of memory.
  EXPECT_EQ(service.stats().compiles, 3);
  EXPECT_EQ(service.stats().store_hits, 0);

  const CompileService::Result a = CompileOne(service, Kernel(1));
  EXPECT_TRUE(a.report.cached());
  ASSERT_EQ(a.report.kernels_size(), 1);
  EXPECT_EQ(a.report.kernels(0).name(), "k1");
  CompileService::Stats s = service.stats();
  EXPECT_EQ(s.store_hits, 1);
  EXPECT_EQ(s.memory_hits, 0);
  EXPECT_EQ(s.compiles, 3);

  // C was used more recently than B, so it is still in memory.
  EXPECT_TRUE(CompileOne(service, Kernel(3)).report.cached());
  s = service.stats();
  EXPECT_EQ(s.memory_hits, 1);
  EXPECT_EQ(s.store_hits, 1);
  EXPECT_EQ(s.compiles, 3);
}

TEST_F(CompileServiceTest, WithoutAStoreEvictedResultsAreRecompiled) {
  CompileService service(Opts(1, /*memory_entries=*/1), &compiler_, nullptr);
  CompileOne(service, Kernel(1));
  CompileOne(service, Kernel(2));
  const CompileService::Result again = CompileOne(service, Kernel(1));
  EXPECT_TRUE(again.report.success());
  const CompileService::Stats s = service.stats();
  EXPECT_EQ(s.compiles, 3);
  EXPECT_EQ(s.store_hits, 0);
  EXPECT_EQ(s.memory_hits, 0);
}

TEST_F(CompileServiceTest, DestructorAnswersEveryQueuedRequest) {
  constexpr int kRequests = 6;
  auto results = std::make_shared<Results>();
  {
    CompileService service(Opts(/*threads=*/1), &compiler_, store_.get());
    for (int i = 0; i < kRequests; ++i) {
      service.Compile(Kernel(10 + i), "kernel.cu", "sm_90",
                      Results::Add(results));
    }
  }
  // Every callback ran by the end of the destructor.
  const auto got = results->Get();
  ASSERT_EQ(got.size(), static_cast<size_t>(kRequests));
  int unavailable = 0;
  for (const auto& r : got) {
    if (r.ok()) {
      EXPECT_TRUE(r->report.success());
      continue;
    }
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
    EXPECT_THAT(r.status().message(), HasSubstr("shutting down"));
    ++unavailable;
  }
  // One thread cannot have run six NVRTC compiles before the destructor.
  EXPECT_GE(unavailable, 1);
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(results->size(), static_cast<size_t>(kRequests));
}

}  // namespace
}  // namespace kbench
