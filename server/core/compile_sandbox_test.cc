// Tests of CompileSandbox with the real kbcompile child and NVRTC (no GPU):
// results match in-process compiles, a compile bomb is stopped by the CPU
// (or wall-clock) limit, the next compile works, a dead child is replaced,
// and CompileService uses the sandbox and remembers limit hits.
#include "compiler/sandbox/compile_sandbox.h"

#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "base/sanitizers.h"
#include "compiler/nvrtc_compiler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/compile_service.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// 2^26 distinct instantiations: NVRTC burns CPU (and memory) for minutes.
constexpr char kBomb[] =
    "template <int N, int M> struct B {\n"
    "  static constexpr int v = B<N - 1, 2 * M>::v + B<N - 1, 2 * M + 1>::v;\n"
    "};\n"
    "template <int M> struct B<0, M> { static constexpr int v = 1; };\n"
    "__global__ void k(int* out) { *out = B<26, 0>::v; }\n";

constexpr char kSimple[] =
    "extern \"C\" __global__ void add(float* x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] += 1.0f;\n"
    "}\n";

CompileSandbox::Options SandboxOptions() {
  CompileSandbox::Options o;
  o.kbcompile_path = ::kbench::testing::BinDir() + "/kbcompile";
  o.children = 1;
  o.cpu_limit = absl::Seconds(2);
  o.wall_limit = absl::Seconds(120);
  o.compile_options = NvrtcCompiler().options();
  return o;
}

TEST(CompileSandboxTest, MatchesTheInProcessCompile) {
  CompileSandbox sandbox(SandboxOptions());
  ASSERT_TRUE(sandbox.Start().ok());
  absl::StatusOr<CompileOutput> boxed =
      sandbox.Compile(kSimple, "kernel.cu", "sm_90");
  ASSERT_TRUE(boxed.ok()) << boxed.status();
  absl::StatusOr<CompileOutput> local =
      NvrtcCompiler().Compile(kSimple, "kernel.cu", "sm_90");
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_TRUE(boxed->report.success());
  EXPECT_EQ(boxed->report.digest(), local->report.digest());
  ASSERT_EQ(boxed->report.kernels_size(), 1);
  EXPECT_EQ(boxed->report.kernels(0).name(), "add");
  EXPECT_EQ(boxed->report.kernels(0).registers(),
            local->report.kernels(0).registers());
  EXPECT_EQ(boxed->cubin, local->cubin);
  EXPECT_EQ(sandbox.spawned(), 1);  // Start's child is reused.
}

TEST(CompileSandboxTest, CompileErrorsAndPolicyRefusalsComeBack) {
  CompileSandbox sandbox(SandboxOptions());
  ASSERT_TRUE(sandbox.Start().ok());
  absl::StatusOr<CompileOutput> bad =
      sandbox.Compile("__global__ void k() { nope; }\n", "kernel.cu", "sm_90");
  ASSERT_TRUE(bad.ok()) << bad.status();
  EXPECT_FALSE(bad->report.success());
  EXPECT_THAT(bad->report.diagnostics(0).message(), HasSubstr("nope"));
  absl::StatusOr<CompileOutput> host =
      sandbox.Compile("#include \"/etc/passwd\"\n", "kernel.cu", "sm_90");
  EXPECT_EQ(host.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(host.status().message(),
              AllOf(HasSubstr("include"), ::testing::Not(HasSubstr("root:"))));
  EXPECT_EQ(sandbox.spawned(), 1);
}

TEST(CompileSandboxTest, BombIsStoppedByTheCpuLimitAndTheNextCompileWorks) {
  CompileSandbox sandbox(SandboxOptions());
  ASSERT_TRUE(sandbox.Start().ok());
  absl::StatusOr<CompileOutput> bomb =
      sandbox.Compile(kBomb, "kernel.cu", "sm_90");
  EXPECT_EQ(bomb.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(bomb.status().message(),
              AllOf(HasSubstr("compile"), HasSubstr("2 s CPU-time limit"),
                    HasSubstr("template")));
  absl::StatusOr<CompileOutput> next =
      sandbox.Compile(kSimple, "kernel.cu", "sm_90");
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_TRUE(next->report.success());
  EXPECT_EQ(sandbox.spawned(), 2);
}

TEST(CompileSandboxTest, BombIsStoppedByTheWallClockLimit) {
  CompileSandbox::Options o = SandboxOptions();
  o.cpu_limit = absl::Seconds(600);
  o.wall_limit = absl::Seconds(2);
  CompileSandbox sandbox(o);
  ASSERT_TRUE(sandbox.Start().ok());
  absl::StatusOr<CompileOutput> bomb =
      sandbox.Compile(kBomb, "kernel.cu", "sm_90");
  EXPECT_EQ(bomb.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(bomb.status().message(),
              AllOf(HasSubstr("compile"), HasSubstr("2 s wall-clock limit")));
  EXPECT_TRUE(sandbox.Compile(kSimple, "kernel.cu", "sm_90").ok());
}

TEST(CompileSandboxTest, MemoryLimitStopsTheBomb) {
  if (kAddressSpaceSanitizer) {
    GTEST_SKIP() << "a sanitizer build sets no RLIMIT_AS (base/sanitizers.h)";
  }
  CompileSandbox::Options o = SandboxOptions();
  o.cpu_limit = absl::Seconds(600);
  o.memory_limit_bytes = int64_t{1} << 30;
  CompileSandbox sandbox(o);
  ASSERT_TRUE(sandbox.Start().ok());
  absl::StatusOr<CompileOutput> bomb =
      sandbox.Compile(kBomb, "kernel.cu", "sm_90");
  ASSERT_EQ(bomb.status().code(), absl::StatusCode::kResourceExhausted)
      << (bomb.ok() ? bomb->report.log() : "");
  EXPECT_THAT(bomb.status().message(),
              AllOf(HasSubstr("compile"), HasSubstr("1024 MiB memory limit")));
  EXPECT_TRUE(sandbox.Compile(kSimple, "kernel.cu", "sm_90").ok());
}

TEST(CompileSandboxTest, DeadChildIsReplaced) {
  CompileSandbox sandbox(SandboxOptions());
  ASSERT_TRUE(sandbox.Start().ok());
  ASSERT_TRUE(sandbox.Compile(kSimple, "kernel.cu", "sm_90").ok());
  sandbox.KillIdleChildForTest();
  absl::StatusOr<CompileOutput> out =
      sandbox.Compile(kSimple, "kernel.cu", "sm_90");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->report.success());
  EXPECT_EQ(sandbox.spawned(), 2);
}

TEST(CompileSandboxTest, MissingBinaryFailsStart) {
  CompileSandbox::Options o = SandboxOptions();
  o.kbcompile_path = "/nonexistent/kbcompile";
  CompileSandbox sandbox(o);
  absl::Status s = sandbox.Start();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("/nonexistent/kbcompile"));
}

absl::StatusOr<CompileService::Result> ServiceCompile(
    CompileService* service, const std::string& source) {
  absl::Notification done;
  absl::StatusOr<CompileService::Result> out;
  service->Compile(source, "kernel.cu", "sm_90",
                   [&](absl::StatusOr<CompileService::Result> r) {
                     out = std::move(r);
                     done.Notify();
                   });
  done.WaitForNotification();
  return out;
}

TEST(CompileSandboxTest, CompileServiceUsesTheSandboxAndRemembersLimitHits) {
  NvrtcCompiler compiler;
  CompileSandbox sandbox(SandboxOptions());
  ASSERT_TRUE(sandbox.Start().ok());
  CompileService::Options options;
  options.threads = 1;
  options.memory_entries = 16;
  CompileService service(options, &compiler, nullptr, &sandbox);
  absl::StatusOr<CompileService::Result> ok = ServiceCompile(&service, kSimple);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(ok->report.success());
  EXPECT_EQ(ok->report.digest(), compiler.CacheKey(kSimple, "sm_90"));
  absl::StatusOr<CompileService::Result> bomb = ServiceCompile(&service, kBomb);
  EXPECT_EQ(bomb.status().code(), absl::StatusCode::kResourceExhausted);
  const int64_t spawned = sandbox.spawned();
  absl::StatusOr<CompileService::Result> again =
      ServiceCompile(&service, kBomb);
  EXPECT_EQ(again.status(), bomb.status());
  EXPECT_EQ(sandbox.spawned(), spawned);  // Served from memory.
  EXPECT_EQ(service.stats().compiles, 2);
}

}  // namespace
}  // namespace kbench
