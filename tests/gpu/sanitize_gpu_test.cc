// sanitize_kernel on a real GPU: kbd with one local worker whose
// compute-sanitizer is found in $CUDA_HOME/bin, /usr/local/cuda/bin or
// $PATH. An out-of-bounds store gets a memcheck finding at its source line,
// a shared-memory exchange without a barrier a racecheck hazard, and the
// naive example no finding. Skips without a GPU or without
// compute-sanitizer.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::kbench::testing::KbdProcess;
using ::kbench::testing::ReadSourceFile;

const char kNaive[] = "kernels/examples/gather_linear_naive.cu";
const char kStore[] = "  out[b * K + k] = acc;\n";

bool HasComputeSanitizer() {
  std::vector<std::string> dirs = {"/usr/local/cuda/bin"};
  if (const char* h = std::getenv("CUDA_HOME"))
    dirs.push_back(std::string(h) + "/bin");
  if (const char* p = std::getenv("PATH")) {
    for (absl::string_view d : absl::StrSplit(p, ':', absl::SkipEmpty())) {
      dirs.emplace_back(d);
    }
  }
  for (const std::string& d : dirs) {
    if (access((d + "/compute-sanitizer").c_str(), X_OK) == 0) return true;
  }
  return false;
}

// 1-based line of the first line of `source` containing `text`; 0 if none.
int LineOf(const std::string& source, const std::string& text) {
  int n = 1;
  for (absl::string_view l : absl::StrSplit(source, '\n')) {
    if (absl::StrContains(l, text)) return n;
    ++n;
  }
  return 0;
}

// The naive kernel with one extra store far past the end of `out`, by the
// last thread only.
std::string OutOfBounds() {
  std::string s = ReadSourceFile(kNaive);
  const std::string patched = absl::StrReplaceAll(
      s, {{kStore, absl::StrCat(kStore,
                                "  if (b == B - 1 && k == K - 1) "
                                "out[(long long)B * K + (1LL << 32)] = acc;  "
                                "// OOB_STORE\n")}});
  EXPECT_NE(patched, s);
  return patched;
}

// The naive kernel exchanging values through shared memory with no
// __syncthreads() between the write and the read of another warp's slot.
// The result stays correct (inputs are never 123456.75).
std::string SharedRace() {
  std::string s = ReadSourceFile(kNaive);
  const std::string patched = absl::StrReplaceAll(
      s, {{kStore,
           "  __shared__ float exchange[256];\n"
           "  exchange[threadIdx.x] = acc;  // RACE_WRITE\n"
           "  const float other = exchange[(threadIdx.x + 32) & 255];  // "
           "RACE_READ\n"
           "  out[b * K + k] = acc + (other == 123456.75f ? 1.0f : 0.0f);\n"}});
  EXPECT_NE(patched, s);
  return patched;
}

class SanitizeGpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::HasGpu() || !HasComputeSanitizer()) return;
    auto kbd = KbdProcess::Start({{"--local-worker=1"}, ""});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = kbd->release();
    stub_ = v1::Kbench::NewStub(
                grpc::CreateChannel(kbd_->address(),
                                    grpc::InsecureChannelCredentials()))
                .release();
    for (int i = 0; i < 600; ++i) {
      v1::GetGpuSpecsResponse resp;
      grpc::ClientContext ctx;
      if (stub_->GetGpuSpecs(&ctx, v1::GetGpuSpecsRequest(), &resp).ok() &&
          resp.gpus_size() > 0) {
        return;
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
    FAIL() << "the local worker did not connect; kbd log:\n" << kbd_->Log();
  }
  static void TearDownTestSuite() {
    delete stub_;
    delete kbd_;
  }
  void SetUp() override {
    KB_SKIP_WITHOUT_GPU();
    if (!HasComputeSanitizer()) GTEST_SKIP() << "no compute-sanitizer here";
  }

  static v1::JobResult Sanitize(const std::string& source,
                                const std::vector<std::string>& tools) {
    v1::SanitizeKernelRequest req;
    req.mutable_kernel()->set_source(source);
    req.mutable_kernel()->set_filename("kernel.cu");
    for (const std::string& t : tools) {
      req.mutable_kernel()->add_sanitize_tools(t);
    }
    v1::SanitizeKernelResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(540));
    const grpc::Status s = stub_->SanitizeKernel(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message() << "\nkbd log:\n" << kbd_->Log();
    return resp.result();
  }

  static std::string Dump(const v1::JobResult& r) {
    std::string out = absl::StrCat(r.message(), "\n");
    for (const v1::SanitizeToolRun& run : r.sanitize().runs()) {
      absl::StrAppend(&out, run.tool(), " exit ", run.exit_code(), " ",
                      run.summary(), "\n", run.log_tail(), "\n");
    }
    return out;
  }

  static KbdProcess* kbd_;
  static v1::Kbench::Stub* stub_;
};

KbdProcess* SanitizeGpuTest::kbd_ = nullptr;
v1::Kbench::Stub* SanitizeGpuTest::stub_ = nullptr;

TEST_F(SanitizeGpuTest, OutOfBoundsStoreIsAMemcheckFindingAtItsLine) {
  const std::string source = OutOfBounds();
  const v1::JobResult r = Sanitize(source, {"memcheck"});
  EXPECT_EQ(r.verdict(), v1::VERDICT_FAILED) << Dump(r);
  ASSERT_GE(r.sanitize().findings_size(), 1) << Dump(r);
  const v1::SanitizeFinding& f = r.sanitize().findings(0);
  EXPECT_EQ(f.tool(), "memcheck");
  EXPECT_TRUE(absl::StrContains(f.kind(), "Invalid __global__ write"))
      << f.kind();
  EXPECT_EQ(f.line(), LineOf(source, "OOB_STORE")) << f.DebugString();
  EXPECT_TRUE(absl::StrContains(f.source_line(), "OOB_STORE"))
      << f.source_line();
  EXPECT_TRUE(absl::StrContains(f.kernel(), "gather_linear")) << f.kernel();
}

TEST_F(SanitizeGpuTest, SharedMemoryRaceIsARacecheckHazard) {
  const std::string source = SharedRace();
  const v1::JobResult r = Sanitize(source, {"racecheck"});
  EXPECT_EQ(r.verdict(), v1::VERDICT_FAILED) << Dump(r);
  ASSERT_GE(r.sanitize().findings_size(), 1) << Dump(r);
  const v1::SanitizeFinding& f = r.sanitize().findings(0);
  EXPECT_EQ(f.tool(), "racecheck");
  const int write = LineOf(source, "RACE_WRITE");
  const int read = LineOf(source, "RACE_READ");
  EXPECT_TRUE((f.line() == write && f.other_line() == read) ||
              (f.line() == read && f.other_line() == write))
      << f.DebugString();
}

TEST_F(SanitizeGpuTest, NaiveKernelHasNoFindings) {
  const v1::JobResult r = Sanitize(ReadSourceFile(kNaive), {});
  EXPECT_EQ(r.verdict(), v1::VERDICT_PASSED) << Dump(r);
  EXPECT_EQ(r.sanitize().findings_size(), 0) << Dump(r);
  ASSERT_EQ(r.sanitize().runs_size(), 3);
  for (const v1::SanitizeToolRun& run : r.sanitize().runs()) {
    // A non-zero exit with no finding means the harness's own kernels (the
    // reference, cuBLAS) were flagged and filtered out: reported, not failed.
    if (run.exit_code() != 0) {
      std::cerr << "note: " << run.tool() << " exited " << run.exit_code()
                << " (" << run.summary() << ") with no finding in the kernel:\n"
                << run.log_tail();
    }
    EXPECT_FALSE(run.timed_out()) << run.tool();
  }
  // The one trial ran at the small shape and passed.
  EXPECT_EQ(r.correctness().trials_run(), 1);
  EXPECT_TRUE(r.correctness().passed());
}

}  // namespace
}  // namespace kbench
