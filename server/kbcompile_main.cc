// kbcompile: kbd's NVRTC child (see server/compile_sandbox.h). Reads
// SandboxCompileRequest frames on stdin, compiles each with NvrtcCompiler
// and writes one SandboxCompileResponse frame per request on stdout, until
// stdin ends. stdout carries the protocol alone: it is moved to a private
// descriptor at start and fd 1 then points at stderr, where logs go.
//
// Limits: RLIMIT_AS (--memory-limit-bytes) once at start; before each
// compile the soft RLIMIT_CPU is raised to the CPU time used so far plus the
// request's cpu_limit_s, so SIGXCPU ends a runaway compile (the parent sees
// the signal and reports the limit). No core files.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/logging.h"
#include "common/nvrtc_compiler.h"
#include "common/proto_io.h"
#include "server/compile_sandbox.pb.h"
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

kbench::internal::SandboxCompileResponse Handle(
    const kbench::internal::SandboxCompileRequest& request,
    int64_t memory_limit) {
  kbench::internal::SandboxCompileResponse response;
  kbench::CompileOptions options;
  options.line_info = request.line_info();
  options.include_dirs.assign(request.include_dirs().begin(),
                              request.include_dirs().end());
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

}  // namespace

int main(int argc, char** argv) {
  int64_t memory_limit = int64_t{4} << 30;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg(argv[i]);
    if (absl::ConsumePrefix(&arg, "--memory-limit-bytes=")) {
      if (!absl::SimpleAtoi(arg, &memory_limit)) {
        fprintf(stderr, "kbcompile: bad --memory-limit-bytes\n");
        return 2;
      }
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
  if (memory_limit > 0) {
    struct rlimit as = {static_cast<rlim_t>(memory_limit),
                        static_cast<rlim_t>(memory_limit)};
    if (setrlimit(RLIMIT_AS, &as) != 0) {
      spdlog::warn("kbcompile: setrlimit(RLIMIT_AS) failed");
    }
  }
  while (true) {
    kbench::internal::SandboxCompileRequest request;
    absl::Status read = kbench::ReadMessage(0, &request);
    if (absl::IsOutOfRange(read)) return 0;  // kbd closed the pipe.
    if (!read.ok()) {
      spdlog::error("kbcompile: reading a request: {}",
                    std::string(read.message()));
      return 1;
    }
    const absl::Status written =
        kbench::WriteMessage(proto_out, Handle(request, memory_limit));
    if (!written.ok()) return 1;
  }
}
