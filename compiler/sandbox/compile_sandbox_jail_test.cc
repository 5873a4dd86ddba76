// Tests of the jail as kbd uses it, through CompileSandbox and the real
// kbcompile: children say what they run under; the headers the contract
// promises compile inside; without Landlock compiles are refused unless the
// operator trusts the host; a child killed from outside is a retryable
// UNAVAILABLE, not the kernel's fault.
#include <dirent.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "compiler/nvrtc_compiler.h"
#include "compiler/sandbox/compile_jail.h"
#include "compiler/sandbox/compile_sandbox.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;

CompileSandbox::Options SandboxOptions() {
  CompileSandbox::Options o;
  o.kbcompile_path = ::kbench::testing::BinDir() + "/kbcompile";
  o.children = 1;
  o.cpu_limit = absl::Seconds(20);
  o.wall_limit = absl::Seconds(60);
  o.compile_options = NvrtcCompiler().options();
  return o;
}

// The headers docs/kernel-contract.md promises.
constexpr char kContractHeaders[] =
    "#include <cuda/std/cstdint>\n"
    "#include <cuda/std/type_traits>\n"
    "#include <cuda/std/limits>\n"
    "#include <cuda/barrier>\n"
    "#include <cuda_fp16.h>\n"
    "#include <cuda_bf16.h>\n"
    "#include <cuda_fp8.h>\n"
    "#include <mma.h>\n"
    "#include <cooperative_groups.h>\n"
    "#include <cuda_pipeline.h>\n"
    "extern \"C\" __global__ void k(cuda::std::uint32_t* p) {\n"
    "  static_assert(cuda::std::is_same_v<cuda::std::uint32_t, unsigned>);\n"
    "  *p = cuda::std::numeric_limits<cuda::std::uint32_t>::max();\n"
    "}\n";

TEST(CompileSandboxJailTest, ChildrenRunJailedAndContractHeadersCompile) {
  if (LandlockAbi() < 1) GTEST_SKIP() << "no Landlock on this kernel";
  CompileSandbox sandbox(SandboxOptions());
  ASSERT_TRUE(sandbox.Start().ok());
  EXPECT_TRUE(sandbox.Health().ok());
  EXPECT_THAT(sandbox.jail(), HasSubstr("landlock ABI"));
  EXPECT_THAT(sandbox.jail(), HasSubstr("seccomp"));
  absl::StatusOr<CompileOutput> out =
      sandbox.Compile(kContractHeaders, "kernel.cu", "sm_90");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->report.success()) << out->report.log();
}

// Runs `body` in a forked child whose landlock_create_ruleset fails with
// ENOSYS, as on a kernel without Landlock (kbcompile inherits the filter).
// Returns the child's exit code.
template <typename Fn>
int WithoutLandlock(Fn body) {
  const pid_t pid = fork();
  if (pid == 0) {
    sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_landlock_create_ruleset, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog = {static_cast<unsigned short>(sizeof(f) / sizeof(f[0])),
                       f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
      _exit(90);
    }
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

TEST(CompileSandboxJailTest, WithoutLandlockCompilesAreRefused) {
  EXPECT_EQ(
      WithoutLandlock([] {
        if (LandlockAbi() != 0) return 1;
        CompileSandbox sandbox(SandboxOptions());
        if (!sandbox.Start().ok()) return 2;  // kbd keeps serving.
        const absl::Status health = sandbox.Health();
        if (health.ok() || health.message().find("--trust-host-compiles") ==
                               absl::string_view::npos) {
          return 3;
        }
        absl::StatusOr<CompileOutput> out =
            sandbox.Compile("__global__ void k() {}\n", "kernel.cu", "sm_90");
        if (out.status().code() != absl::StatusCode::kFailedPrecondition)
          return 4;
        return 0;
      }),
      0);
}

TEST(CompileSandboxJailTest, TrustedHostCompilesUnjailedAndSaysSo) {
  EXPECT_EQ(WithoutLandlock([] {
              CompileSandbox::Options o = SandboxOptions();
              o.allow_unjailed = true;
              CompileSandbox sandbox(o);
              if (!sandbox.Start().ok() || !sandbox.Health().ok()) return 2;
              if (sandbox.jail() != "unjailed (trusted host)") return 3;
              absl::StatusOr<CompileOutput> out = sandbox.Compile(
                  "__global__ void k() {}\n", "kernel.cu", "sm_90");
              return out.ok() && out->report.success() ? 0 : 4;
            }),
            0);
}

// kbcompile children of this process, by /proc.
std::vector<pid_t> KbcompileChildren() {
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  while (struct dirent* e = readdir(d)) {
    const pid_t pid = atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream stat("/proc/" + std::string(e->d_name) + "/stat");
    std::string line;
    std::getline(stat, line);
    const size_t close = line.rfind(')');
    if (close == std::string::npos ||
        line.find("(kbcompile)") == std::string::npos) {
      continue;
    }
    int ppid = 0;
    char state = 0;
    if (sscanf(line.c_str() + close + 1, " %c %d", &state, &ppid) == 2 &&
        ppid == getpid()) {
      out.push_back(pid);
    }
  }
  closedir(d);
  return out;
}

// 2^26 instantiations: minutes of NVRTC, long enough to be killed mid-way.
constexpr char kSlow[] =
    "template <int N, int M> struct B {\n"
    "  static constexpr int v = B<N - 1, 2 * M>::v + B<N - 1, 2 * M + 1>::v;\n"
    "};\n"
    "template <int M> struct B<0, M> { static constexpr int v = 1; };\n"
    "__global__ void k(int* out) { *out = B<26, 0>::v; }\n";

TEST(CompileSandboxJailTest, ChildKilledFromOutsideIsUnavailable) {
  CompileSandbox sandbox(SandboxOptions());
  ASSERT_TRUE(sandbox.Start().ok());
  absl::StatusOr<CompileOutput> out;
  std::thread compile(
      [&] { out = sandbox.Compile(kSlow, "kernel.cu", "sm_90"); });
  absl::SleepFor(absl::Milliseconds(500));  // The compile is under way.
  const std::vector<pid_t> children = KbcompileChildren();
  ASSERT_EQ(children.size(), 1u);
  kill(children[0], SIGKILL);  // As the OOM killer would.
  compile.join();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnavailable)
      << out.status();
  EXPECT_THAT(out.status().message(), HasSubstr("retry"));
  // The next compile gets a fresh child and works.
  absl::StatusOr<CompileOutput> next =
      sandbox.Compile("__global__ void k() {}\n", "kernel.cu", "sm_90");
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_TRUE(next->report.success());
}

}  // namespace
}  // namespace kbench
