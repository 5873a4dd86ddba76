#include "compiler/sandbox/compile_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/paths.h"
#include "base/process/spawn.h"
#include "base/proto_io.h"
#include "base/status_macros.h"
#include "compiler/sandbox/compile_sandbox.pb.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

// Copies a child's stderr into kbd's log, line by line (control
// characters shown as '?', lines cut at 4 KiB), until the pipe ends; then
// closes it.
void RelayLog(int fd) {
  std::string pending;
  char buf[4096];
  auto emit = [&pending](size_t n) {
    std::string line = pending.substr(0, std::min<size_t>(n, 4096));
    for (char& c : line) {
      if (static_cast<unsigned char>(c) < 0x20 && c != '\t') c = '?';
    }
    if (!line.empty()) spdlog::info("[kbcompile] {}", line);
  };
  while (true) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      emit(nl);
      pending.erase(0, nl + 1);
    }
    if (pending.size() > 4096) {
      emit(pending.size());
      pending.clear();
    }
  }
  emit(pending.size());
  close(fd);
}

std::string Describe(int status) {
  if (WIFEXITED(status)) {
    return absl::StrCat("exited with status ", WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status)) {
    return absl::StrCat("was killed by signal ", WTERMSIG(status), " (",
                        strsignal(WTERMSIG(status)), ")");
  }
  return absl::StrCat("ended with wait status ", status);
}

int64_t CeilSeconds(absl::Duration d) {
  return static_cast<int64_t>(std::ceil(absl::ToDoubleSeconds(d)));
}

}  // namespace

CompileSandbox::CompileSandbox(Options options) : options_(std::move(options)) {
  if (options_.kbcompile_path.empty()) {
    options_.kbcompile_path = ExeDir() + "/kbcompile";
  }
  if (options_.compile_options.include_dirs.empty()) {
    options_.compile_options.include_dirs =
        NvrtcCompiler().options().include_dirs;
  }
  max_children_ = options_.children;
  if (max_children_ <= 0) {
    max_children_ = static_cast<int>(std::thread::hardware_concurrency());
  }
  if (max_children_ <= 0) max_children_ = 2;
}

CompileSandbox::~CompileSandbox() {
  absl::MutexLock lock(&mu_);
  for (std::unique_ptr<Child>& c : idle_) Reap(c.get(), /*kill_first=*/true);
  idle_.clear();
}

int64_t CompileSandbox::spawned() const {
  absl::MutexLock lock(&mu_);
  return spawned_;
}

std::string CompileSandbox::jail() const {
  absl::MutexLock lock(&mu_);
  return jail_;
}

absl::Status CompileSandbox::Health() const {
  absl::MutexLock lock(&mu_);
  return refusal_;
}

absl::StatusOr<std::unique_ptr<CompileSandbox::Child>> CompileSandbox::Spawn() {
  const std::string& path = options_.kbcompile_path;
  if (access(path.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot start the compile sandbox: '", path, "' is not an executable (",
        strerror(errno), "); install kbcompile beside kbd or pass its path"));
  }
  std::vector<std::string> args = {
      path, absl::StrCat("--memory-limit-bytes=", options_.memory_limit_bytes)};
  for (const std::string& dir : options_.compile_options.include_dirs) {
    args.push_back(absl::StrCat("--include-dir=", dir));
  }
  if (options_.allow_unjailed) args.push_back("--allow-unjailed");
  int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0 ||
      pipe2(err_pipe, O_CLOEXEC) != 0) {
    const int err = errno;
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1],
                   err_pipe[0], err_pipe[1]}) {
      if (fd >= 0) close(fd);
    }
    return absl::InternalError(
        absl::StrCat("cannot create pipes for kbcompile: ", strerror(err)));
  }
  SpawnOptions spawn;
  spawn.argv = std::move(args);
  spawn.fds = {{0, in_pipe[0]}, {1, out_pipe[1]}, {2, err_pipe[1]}};
  absl::StatusOr<pid_t> spawned = SpawnProcess(spawn);
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (!spawned.ok()) {
    close(in_pipe[1]);
    close(out_pipe[0]);
    close(err_pipe[0]);
    return absl::Status(
        spawned.status().code(),
        absl::StrCat("cannot start kbcompile: ", spawned.status().message()));
  }
  const pid_t pid = *spawned;
  auto child = std::make_unique<Child>();
  child->pid = pid;
  child->in_fd = in_pipe[1];
  child->out_fd = out_pipe[0];
  child->relay = std::thread(RelayLog, err_pipe[0]);
  {
    absl::MutexLock lock(&mu_);
    ++spawned_;
  }
  spdlog::debug("started kbcompile as pid {}", pid);
  return child;
}

int CompileSandbox::Reap(Child* child, bool kill_first) {
  if (child->in_fd >= 0) close(child->in_fd);
  if (child->out_fd >= 0) close(child->out_fd);
  child->in_fd = child->out_fd = -1;
  int status = 0;
  if (child->pid > 0) {
    if (kill_first) kill(child->pid, SIGKILL);
    while (waitpid(child->pid, &status, 0) < 0 && errno == EINTR) {
    }
    child->pid = -1;
  }
  // The child is gone, so its stderr pipe has ended: the relay returns.
  if (child->relay.joinable()) child->relay.join();
  return status;
}

absl::Status CompileSandbox::Start() {
  ASSIGN_OR_RETURN(std::unique_ptr<Child> child, Spawn());
  // A trivial compile proves the child runs and NVRTC loads in it.
  bool reusable = false;
  absl::StatusOr<CompileOutput> out =
      RunOn(child.get(), "__global__ void kbench_sandbox_probe() {}\n",
            "probe.cu", "sm_90", &reusable);
  // No jail and no --trust-host-compiles: kbd keeps serving, but every
  // compile is refused with the child's message, and Health() says so.
  const bool refusing =
      !out.ok() && reusable && absl::IsFailedPrecondition(out.status());
  if (!refusing && (!out.ok() || !out->report.success() || !reusable)) {
    Reap(child.get(), /*kill_first=*/true);
    return absl::FailedPreconditionError(absl::StrCat(
        "the compile sandbox '", options_.kbcompile_path, "' does not work: ",
        out.ok() ? out->report.log() : std::string(out.status().message())));
  }
  absl::MutexLock lock(&mu_);
  if (refusing) {
    refusal_ = out.status();
    spdlog::error("{}", std::string(refusal_.message()));
  } else if (jail_.empty()) {
    spdlog::warn(
        "kbcompile runs UNJAILED (--trust-host-compiles): kernel sources can "
        "#include any file kbd can read");
    jail_ = "unjailed (trusted host)";
  }
  ++live_;
  idle_.push_back(std::move(child));
  return absl::OkStatus();
}

void CompileSandbox::KillIdleChildForTest() {
  absl::MutexLock lock(&mu_);
  if (idle_.empty()) return;
  const pid_t pid = idle_.back()->pid;
  kill(pid, SIGKILL);
  // Wait until it is dead (a zombie), as a child that died while idle is.
  siginfo_t info;
  do {
    std::memset(&info, 0, sizeof(info));
  } while (waitid(P_PID, pid, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR);
}

std::string CompileSandbox::LimitAdvice() const {
  return "simplify template recursion/unrolling (deep or exponential "
         "template instantiation, huge #pragma unroll, large constexpr "
         "evaluation)";
}

absl::StatusOr<CompileOutput> CompileSandbox::RunOn(Child* child,
                                                    const std::string& source,
                                                    const std::string& filename,
                                                    const std::string& arch,
                                                    bool* reusable) {
  *reusable = false;
  internal::SandboxCompileRequest request;
  request.set_source(source);
  request.set_filename(filename);
  request.set_arch(arch);
  request.set_line_info(options_.compile_options.line_info);
  for (const std::string& dir : options_.compile_options.include_dirs) {
    request.add_include_dirs(dir);
  }
  request.set_cpu_limit_s(static_cast<int32_t>(
      std::max<int64_t>(1, CeilSeconds(options_.cpu_limit))));
  const absl::Time start = absl::Now();
  absl::Status sent = WriteMessage(child->in_fd, request);
  absl::Status received = sent;
  internal::SandboxCompileResponse response;
  if (sent.ok()) {
    const absl::Duration left = options_.wall_limit - (absl::Now() - start);
    ASSIGN_OR_RETURN(
        bool readable,
        WaitReadable(child->out_fd,
                     std::max<int64_t>(0, absl::ToInt64Milliseconds(left))));
    if (!readable) {
      const int status = Reap(child, /*kill_first=*/true);
      spdlog::warn("kbcompile stopped after the {} wall-clock limit ({})",
                   absl::FormatDuration(options_.wall_limit), Describe(status));
      return absl::ResourceExhaustedError(absl::StrCat(
          "the compile exceeded its ", CeilSeconds(options_.wall_limit),
          " s wall-clock limit and was stopped; ", LimitAdvice()));
    }
    received = ReadMessage(child->out_fd, &response);
  }
  if (!received.ok()) {
    const int status = Reap(child, /*kill_first=*/true);
    const std::string how = Describe(status);
    spdlog::warn("kbcompile {} during a compile of {}", how, filename);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the compile exceeded its ", CeilSeconds(options_.cpu_limit),
          " s CPU-time limit and was stopped; ", LimitAdvice()));
    }
    // SIGKILL or SIGTERM that we did not send: killed from outside (an
    // operator, the OOM killer). The same source may well compile next
    // time, so this is retryable and must not be cached as the kernel's
    // fault. Other deaths (SIGABRT, SIGSEGV) are what NVRTC does when an
    // allocation fails under RLIMIT_AS.
    if (WIFSIGNALED(status) &&
        (WTERMSIG(status) == SIGKILL || WTERMSIG(status) == SIGTERM)) {
      return absl::UnavailableError(absl::StrCat(
          "the compiler process ", how,
          " from outside kbench during the compile (not a kbench limit); "
          "retry the call"));
    }
    return absl::ResourceExhaustedError(
        absl::StrCat("the compiler process ", how,
                     " during the compile (it may have exceeded its ",
                     options_.memory_limit_bytes >> 20, " MiB memory limit); ",
                     LimitAdvice()));
  }
  *reusable = true;
  if (!response.jail().empty()) {
    absl::MutexLock lock(&mu_);
    if (jail_.empty()) jail_ = response.jail();
  }
  if (response.code() != 0) {
    return absl::Status(static_cast<absl::StatusCode>(response.code()),
                        response.message());
  }
  CompileOutput out;
  out.report = std::move(*response.mutable_report());
  out.cubin = std::move(*response.mutable_cubin());
  return out;
}

absl::StatusOr<CompileOutput> CompileSandbox::Compile(
    const std::string& source, const std::string& filename,
    const std::string& arch) {
  // Two tries: a child that died while idle fails before compiling anything.
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<Child> child;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](CompileSandbox* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu_) {
            return !s->idle_.empty() || s->live_ < s->max_children_;
          },
          this));
      if (!idle_.empty()) {
        child = std::move(idle_.back());
        idle_.pop_back();
      } else {
        ++live_;  // A new child, spawned below.
      }
    }
    auto give_back = [this](std::unique_ptr<Child> c) {
      absl::MutexLock lock(&mu_);
      if (c != nullptr) {
        idle_.push_back(std::move(c));
      } else {
        --live_;
      }
    };
    if (child == nullptr) {
      absl::StatusOr<std::unique_ptr<Child>> spawned = Spawn();
      if (!spawned.ok()) {
        give_back(nullptr);
        return spawned.status();
      }
      child = std::move(*spawned);
    }
    // A child that died while idle (crash, external kill) is replaced.
    if (waitpid(child->pid, nullptr, WNOHANG) == child->pid) {
      child->pid = -1;
      Reap(child.get(), /*kill_first=*/false);
      give_back(nullptr);
      if (attempt == 0) continue;
      return absl::InternalError("kbcompile exits right after starting");
    }
    bool reusable = false;
    absl::StatusOr<CompileOutput> out =
        RunOn(child.get(), source, filename, arch, &reusable);
    if (!reusable) {
      Reap(child.get(), /*kill_first=*/true);
      give_back(nullptr);
    } else {
      give_back(std::move(child));
    }
    return out;
  }
}

}  // namespace kbench
