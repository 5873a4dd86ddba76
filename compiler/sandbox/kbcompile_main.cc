// kbcompile: kbd's NVRTC child (see compiler/sandbox/compile_sandbox.h). Reads
// SandboxCompileRequest frames on stdin, compiles each with NvrtcCompiler
// and writes one SandboxCompileResponse frame per request on stdout, until
// stdin ends. stdout carries the protocol alone: it is moved to a private
// descriptor at start and fd 1 then points at stderr, where logs go.
//
// Limits: RLIMIT_AS (--memory-limit-bytes) once at start; before each
// compile the soft RLIMIT_CPU is raised to the CPU time used so far plus the
// request's cpu_limit_s, so SIGXCPU ends a runaway compile (the parent sees
// the signal and reports the limit). No core files.
//
// The jail: before its first compile it closes every other descriptor and
// enters the CompileJail (compiler/sandbox/compile_jail.h) around the
// --include-dir trees and NVRTC's library directory, then compiles a probe:
// from then on no source can make NVRTC read a host file or reach the network.
// Without Landlock every compile is refused with FAILED_PRECONDITION, unless
// --allow-unjailed (kbd's
// --trust-host-compiles) says the host trusts its clients.
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <nvrtc.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/logging.h"
#include "base/proto_io.h"
#include "base/sanitizers.h"
#include "compiler/nvrtc_compiler.h"
#include "compiler/sandbox/compile_jail.h"
#include "compiler/sandbox/compile_sandbox.pb.h"
#include "spdlog/spdlog.h"

namespace {

int64_t CpuSecondsUsed() {
  struct rusage u;
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  const int64_t micros =
      (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * int64_t{1000000} +
      u.ru_utime.tv_usec + u.ru_stime.tv_usec;
  return (micros + 999999) / 1000000;
}

void SetCpuLimit(int64_t seconds_from_now) {
  struct rlimit lim;
  if (getrlimit(RLIMIT_CPU, &lim) != 0) return;
  rlim_t soft = static_cast<rlim_t>(CpuSecondsUsed() + seconds_from_now);
  if (lim.rlim_max != RLIM_INFINITY && soft > lim.rlim_max) {
    soft = lim.rlim_max;
  }
  lim.rlim_cur = soft;
  if (setrlimit(RLIMIT_CPU, &lim) != 0) {
    spdlog::warn("kbcompile: setrlimit(RLIMIT_CPU) failed");
  }
}

void SetMemoryLimitHit(int64_t memory_limit,
                       kbench::internal::SandboxCompileResponse* response) {
  response->Clear();
  response->set_code(static_cast<int>(absl::StatusCode::kResourceExhausted));
  response->set_message(absl::StrCat(
      "the compile exceeded its ", memory_limit >> 20,
      " MiB memory limit and was stopped; simplify template "
      "recursion/unrolling (deep or exponential template instantiation, huge "
      "#pragma unroll, large constexpr evaluation)"));
}

// What the child was started with, and what its jail is.
struct ChildState {
  int64_t memory_limit = int64_t{4} << 30;
  std::vector<std::string> include_dirs;
  bool allow_unjailed = false;
  std::string jail;        // CompileJailReport::Describe(); empty: unjailed.
  std::string jail_error;  // Why there is no jail.
};

kbench::internal::SandboxCompileResponse Handle(
    const kbench::internal::SandboxCompileRequest& request,
    const ChildState& state) {
  const int64_t memory_limit = state.memory_limit;
  kbench::internal::SandboxCompileResponse response;
  if (state.jail.empty() && !state.allow_unjailed) {
    response.set_code(static_cast<int>(absl::StatusCode::kFailedPrecondition));
    response.set_message(absl::StrCat(
        "kernel compiles are refused on this host: ", state.jail_error,
        ". Run kbd on a Linux kernel with Landlock (5.13+, in the LSM list), "
        "or start it with --trust-host-compiles if every client is trusted"));
    return response;
  }
  if (std::vector<std::string>(request.include_dirs().begin(),
                               request.include_dirs().end()) !=
      state.include_dirs) {
    response.set_code(static_cast<int>(absl::StatusCode::kInvalidArgument));
    response.set_message(
        "the request's include dirs differ from the ones kbcompile was "
        "started (and jailed) with");
    return response;
  }
  kbench::CompileOptions options;
  options.line_info = request.line_info();
  options.include_dirs = state.include_dirs;
  try {
    kbench::NvrtcCompiler compiler(options);
    SetCpuLimit(request.cpu_limit_s() > 0 ? request.cpu_limit_s() : 20);
    absl::StatusOr<kbench::CompileOutput> out =
        compiler.Compile(request.source(), request.filename(), request.arch());
    SetCpuLimit(3600);  // Idle: only the next request's limit matters.
    if (!out.ok()) {
      response.set_code(static_cast<int>(out.status().code()));
      response.set_message(std::string(out.status().message()));
      if (absl::StrContains(out.status().message(), "OUT_OF_MEMORY")) {
        SetMemoryLimitHit(memory_limit, &response);
      }
      return response;
    }
    // NVRTC reports running out of address space as a compile error.
    if (!out->report.success() &&
        absl::StrContains(out->report.log(),
                          "catastrophic error: out of memory")) {
      SetMemoryLimitHit(memory_limit, &response);
      return response;
    }
    *response.mutable_report() = std::move(out->report);
    response.set_cubin(std::move(out->cubin));
  } catch (const std::bad_alloc&) {
    SetMemoryLimitHit(memory_limit, &response);
  }
  return response;
}

// Closes every descriptor but 0-2 and `keep`: nothing inherited by mistake
// (a store file, a socket) stays reachable from inside the jail.
void CloseOtherDescriptors(int keep) {
  std::vector<int> fds;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (struct dirent* e = readdir(d)) {
      const int fd = atoi(e->d_name);
      if (e->d_name[0] != '.' && fd > 2 && fd != keep && fd != dirfd(d)) {
        fds.push_back(fd);
      }
    }
    closedir(d);
  }
  for (int fd : fds) close(fd);
}

// The include trees as the jail must see them: each dir, its cccl/ (where
// <cuda/std/...> lives) and their real paths (the jail follows no links).
std::vector<std::string> JailDirs(const std::vector<std::string>& dirs) {
  std::vector<std::string> out;
  for (const std::string& d : dirs) {
    for (const std::string& p : {d, d + "/cccl"}) {
      out.push_back(p);
      char buf[PATH_MAX];
      if (realpath(p.c_str(), buf) != nullptr) out.emplace_back(buf);
    }
  }
  return out;
}

// The directory of the loaded libnvrtc (and its real path), "" if unknown.
std::string NvrtcLibraryDir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&nvrtcVersion), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  char buf[PATH_MAX];
  const char* path =
      realpath(info.dli_fname, buf) != nullptr ? buf : info.dli_fname;
  std::string dir(path);
  const size_t slash = dir.rfind('/');
  return slash == std::string::npos ? "" : dir.substr(0, slash);
}

// Compiles a probe inside the jail, so the first request does not pay for
// NVRTC's lazy set-up (libnvrtc-builtins, the CCCL headers). Its outcome
// does not matter.
void WarmUp(const std::vector<std::string>& include_dirs) {
  kbench::CompileOptions options;
  options.include_dirs = include_dirs;
  kbench::NvrtcCompiler compiler(options);
  (void)compiler.Compile(
      "#include <cuda/std/cstdint>\n#include <cuda_fp16.h>\n"
      "extern \"C\" __global__ void kbench_warm_up(int* p) { *p = 1; }\n",
      "warm_up.cu", "sm_90");
}

}  // namespace

int main(int argc, char** argv) {
  ChildState state;
  int64_t& memory_limit = state.memory_limit;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg(argv[i]);
    if (absl::ConsumePrefix(&arg, "--memory-limit-bytes=")) {
      if (!absl::SimpleAtoi(arg, &memory_limit)) {
        fprintf(stderr, "kbcompile: bad --memory-limit-bytes\n");
        return 2;
      }
    } else if (absl::ConsumePrefix(&arg, "--include-dir=")) {
      state.include_dirs.emplace_back(arg);
    } else if (arg == "--allow-unjailed") {
      state.allow_unjailed = true;
    } else {
      fprintf(stderr, "kbcompile: unknown argument %s (it is started by kbd)\n",
              argv[i]);
      return 2;
    }
  }
  kbench::InitLogging("kbcompile", "info");
  // The protocol gets a private descriptor; stray writes to fd 1 go to
  // stderr.
  const int proto_out = dup(1);
  if (proto_out < 0 || dup2(2, 1) < 0) {
    spdlog::error("kbcompile: cannot set up its descriptors");
    return 2;
  }
  struct rlimit core = {0, 0};
  setrlimit(RLIMIT_CORE, &core);
  if (memory_limit > 0 && kbench::kAddressSpaceSanitizer) {
    spdlog::warn(
        "kbcompile: built with a sanitizer; the memory limit is not set");
  } else if (memory_limit > 0) {
    struct rlimit as = {static_cast<rlim_t>(memory_limit),
                        static_cast<rlim_t>(memory_limit)};
    if (setrlimit(RLIMIT_AS, &as) != 0) {
      spdlog::warn("kbcompile: setrlimit(RLIMIT_AS) failed");
    }
  }
  if (state.include_dirs.empty()) {
    state.include_dirs = kbench::NvrtcCompiler().options().include_dirs;
  }
  // The jail is entered before the first compile, while this process has
  // one thread: NVRTC may start threads of its own during a compile (it did
  // on a 16-core host), and Landlock binds only the thread that enters it
  // and the threads it starts afterwards. NVRTC's own directory stays
  // readable, for the libraries it loads lazily (libnvrtc-builtins).
  CloseOtherDescriptors(proto_out);
  std::vector<std::string> readable = JailDirs(state.include_dirs);
  if (const std::string lib = NvrtcLibraryDir(); !lib.empty()) {
    readable.push_back(lib);
  }
  absl::StatusOr<kbench::CompileJailReport> jail =
      kbench::EnterCompileJail(readable);
  if (jail.ok()) {
    state.jail = jail->Describe();
  } else if (absl::IsFailedPrecondition(jail.status())) {
    state.jail_error = std::string(jail.status().message());
    spdlog::warn("kbcompile: no jail: {}", state.jail_error);
  } else {
    // Half-way restrictions: a child in an unknown state must not serve.
    spdlog::error("kbcompile: entering the jail: {}",
                  std::string(jail.status().message()));
    return 3;
  }
  WarmUp(state.include_dirs);
  while (true) {
    kbench::internal::SandboxCompileRequest request;
    absl::Status read = kbench::ReadMessage(0, &request);
    if (absl::IsOutOfRange(read)) return 0;  // kbd closed the pipe.
    if (!read.ok()) {
      spdlog::error("kbcompile: reading a request: {}",
                    std::string(read.message()));
      return 1;
    }
    kbench::internal::SandboxCompileResponse response = Handle(request, state);
    response.set_jail(state.jail);
    const absl::Status written = kbench::WriteMessage(proto_out, response);
    if (!written.ok()) return 1;
  }
}
