// Tests of the CompileJail (Landlock + seccomp) in a forked child: what a
// jailed compiler can still read, and what it can no longer do. Skips where
// the kernel has no Landlock (the jail then cannot be entered at all, and
// kbcompile refuses compiles: see compile_sandbox_test).
#include "compiler/sandbox/compile_jail.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <nvrtc.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "base/sanitizers.h"
#include "compiler/nvrtc_compiler.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

// Runs `probe` in a jailed child; returns its exit code (or 100+signal).
template <typename Fn>
int InJail(Fn probe) {
  const pid_t pid = fork();
  if (pid == 0) {
    absl::StatusOr<CompileJailReport> jail =
        EnterCompileJail(NvrtcCompiler().options().include_dirs);
    if (!jail.ok()) {
      // The reason, for the test log (90 alone says only that it failed).
      const std::string why = jail.status().ToString() + "\n";
      (void)!write(2, why.data(), why.size());
      _exit(90);
    }
    _exit(probe());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return 100 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

class CompileJailTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // TSan restarts its background thread in every forked child, and
    // EnterCompileJail's notice stops it only once the runtime has seen a
    // thread start in this process (that is when it registers the stop).
    if (KBENCH_SANITIZER_RUNTIME) std::thread([] {}).join();
  }
  void SetUp() override {
    if (LandlockAbi() < 1) GTEST_SKIP() << "no Landlock on this kernel";
  }
};

TEST_F(CompileJailTest, ReadsTheIncludeTreeOnly) {
  const std::string header =
      NvrtcCompiler().options().include_dirs.front() + "/cuda_fp16.h";
  ASSERT_EQ(access(header.c_str(), R_OK), 0) << header;
  EXPECT_EQ(InJail([&] {
              const int fd = open(header.c_str(), O_RDONLY);
              return fd >= 0 ? 0 : 1;
            }),
            0);
  for (const char* path : {"/etc/passwd", "/proc/self/environ",
                           "/proc/self/cmdline", "/proc/1/environ", "/"}) {
    EXPECT_EQ(InJail([&] {
                const int fd = open(path, O_RDONLY);
                return fd < 0 && errno == EACCES ? 0 : 1;
              }),
              0)
        << path << " was readable inside the jail";
  }
  // Traversal out of the allowed tree is the same as any other path.
  const std::string escape =
      NvrtcCompiler().options().include_dirs.front() + "/../../../etc/passwd";
  EXPECT_EQ(InJail([&] { return open(escape.c_str(), O_RDONLY) < 0 ? 0 : 1; }),
            0);
}

TEST_F(CompileJailTest, WritesNothing) {
  char tmpl[] = "/tmp/kbench-jail-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string file = std::string(tmpl) + "/x";
  EXPECT_EQ(InJail([&] {
              return open(file.c_str(), O_WRONLY | O_CREAT, 0600) < 0 ? 0 : 1;
            }),
            0);
  EXPECT_NE(access(file.c_str(), F_OK), 0);
  rmdir(tmpl);
}

TEST_F(CompileJailTest, NoSocketsNoExec) {
  EXPECT_EQ(InJail([] {
              return socket(AF_INET, SOCK_STREAM, 0) < 0 && errno == EPERM ? 0
                                                                           : 1;
            }),
            0);
  EXPECT_EQ(InJail([] {
              return socket(AF_UNIX, SOCK_STREAM, 0) < 0 && errno == EPERM ? 0
                                                                           : 1;
            }),
            0);
  EXPECT_EQ(InJail([] {
              char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
              execv("/bin/true", argv);
              return errno == EPERM ? 0 : 1;
            }),
            0);
}

TEST_F(CompileJailTest, NvrtcStillCompilesInside) {
  // The jailed compile must work once NVRTC is loaded (kbcompile warms up
  // the same way before entering the jail).
  NvrtcCompiler compiler;
  ASSERT_TRUE(compiler.Compile("__global__ void k() {}", "k.cu", "sm_90").ok());
  EXPECT_EQ(InJail([&] {
              auto out = compiler.Compile(
                  "#include <cuda/std/cstdint>\n#include <cuda_bf16.h>\n"
                  "extern \"C\" __global__ void k(cuda::std::uint32_t* p) "
                  "{ *p = 1; }\n",
                  "k.cu", "sm_90");
              return out.ok() && out->report.success() ? 0 : 1;
            }),
            0);
}

// Raw NVRTC (no source policy): 0 when the compile failed without the
// canary or /etc/passwd's first line in its log, 3 when either leaked, 4
// when it compiled, 2 when NVRTC failed to start.
int CompileRaw(const char* src) {
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, src, "k.cu", 0, nullptr, nullptr) !=
      NVRTC_SUCCESS) {
    return 2;
  }
  const std::string inc = "-I" + NvrtcCompiler().options().include_dirs.front();
  const char* opts[] = {"-arch=sm_90", inc.c_str()};
  const nvrtcResult r = nvrtcCompileProgram(prog, 2, opts);
  size_t n = 0;
  nvrtcGetProgramLogSize(prog, &n);
  std::string log(n, '\0');
  nvrtcGetProgramLog(prog, &log[0]);
  nvrtcDestroyProgram(&prog);
  if (absl::StrContains(log, "canary-5f3e9d1c") ||
      absl::StrContains(log, "root:x:0:0")) {
    return 3;
  }
  return r != NVRTC_SUCCESS ? 0 : 4;
}

// Below the source policy: raw NVRTC, in the jail, asked to include host
// files by every spelling. The policy would refuse these sources; here the
// jail alone must hold, and the log must carry none of the files' text.
TEST_F(CompileJailTest, NvrtcCannotIncludeHostFilesInside) {
  setenv("KBENCH_JAIL_CANARY", "canary-5f3e9d1c", 1);
  NvrtcCompiler warm;
  ASSERT_TRUE(warm.Compile("__global__ void k() {}", "k.cu", "sm_90").ok());
  const char* passwd = "#include \"/etc/passwd\"\n";
  // The control: outside the jail the same compile does leak, so the
  // check below can fail.
  const pid_t pid = fork();
  if (pid == 0) _exit(CompileRaw(passwd));
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_EQ(WEXITSTATUS(status), 3) << "the unjailed control did not leak";
  for (const char* src : {
           passwd,
           "__device__ int leak[] = {\n%:include \"/proc/self/environ\"\n};\n",
           "#define STR(x) #x\n#define X(x) STR(x)\n"
           "static_assert(0, X(\n#include \"/proc/self/environ\"\n));\n",
           "#include <../../../../../../etc/passwd>\n",
       }) {
    EXPECT_EQ(InJail([&] { return CompileRaw(src); }), 0) << src;
  }
  unsetenv("KBENCH_JAIL_CANARY");
}

// Landlock binds the calling thread only: a second thread would stay free.
TEST_F(CompileJailTest, RefusesAProcessWithOtherThreads) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::thread idle([] { absl::SleepFor(absl::Seconds(2)); });
    absl::StatusOr<CompileJailReport> jail =
        EnterCompileJail(NvrtcCompiler().options().include_dirs);
    const bool refused =
        !jail.ok() && absl::IsInternal(jail.status()) &&
        absl::StrContains(jail.status().message(), "single-threaded");
    idle.join();
    _exit(refused ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_F(CompileJailTest, DescribesWhatItApplied) {
  EXPECT_EQ(InJail([] {
              absl::StatusOr<CompileJailReport> again =
                  EnterCompileJail({"/usr"});  // Nested: only narrows.
              return again.ok() && again->seccomp ? 0 : 1;
            }),
            0);
  CompileJailReport r;
  r.landlock_abi = 7;
  r.network_rules = r.scoped = r.seccomp = true;
  EXPECT_EQ(r.Describe(), "landlock ABI 7, no TCP, scoped, seccomp");
}

}  // namespace
}  // namespace kbench
