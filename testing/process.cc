#include "testing/process.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "base/gpu_probe.h"
#include "base/paths.h"
#include "base/process/spawn.h"

namespace kbench::testing {
namespace fs = std::filesystem;

namespace {

// The worker token file of each kbd started here, by its gRPC address, so
// that StartWorker can hand it to the worker.
ABSL_CONST_INIT absl::Mutex token_mu(absl::kConstInit);
std::map<std::string, std::string>& TokenFiles() {
  static auto* files = new std::map<std::string, std::string>();
  return *files;
}

}  // namespace

std::string WorkerTokenFileFor(const std::string& address) {
  absl::MutexLock lock(&token_mu);
  auto it = TokenFiles().find(address);
  return it == TokenFiles().end() ? "" : it->second;
}

std::string BinDir() {
  if (const char* d = std::getenv("KBENCH_BIN_DIR"); d && *d) return d;
  std::string exe_dir = ExeDir();
  if (fs::exists(exe_dir + "/kbd")) return exe_dir;
  return (fs::path(exe_dir) / ".." / "bin").lexically_normal().string();
}

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "kbtest-XXXXXX").string();
  path_ = mkdtemp(tmpl.data());
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

absl::StatusOr<std::unique_ptr<Child>> Child::Start(
    const std::vector<std::string>& argv,
    const std::map<std::string, std::string>& env) {
  auto c = std::unique_ptr<Child>(new Child());
  c->dir_ = std::make_unique<TempDir>();
  c->out_path_ = c->dir_->path() + "/stdout";
  c->err_path_ = c->dir_->path() + "/stderr";
  const int out = open(c->out_path_.c_str(),
                       O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err = open(c->err_path_.c_str(),
                       O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0 || err < 0) {
    if (out >= 0) close(out);
    if (err >= 0) close(err);
    return absl::InternalError("cannot create the child's output files");
  }
  SpawnOptions spawn;
  spawn.argv = argv;
  spawn.env = env;
  spawn.fds = {{0, kDevNull}, {1, out}, {2, err}};
  spawn.new_process_group = true;
  absl::StatusOr<pid_t> pid = SpawnProcess(spawn);
  close(out);
  close(err);
  if (!pid.ok()) return pid.status();
  c->pid_ = *pid;
  return c;
}

Child::~Child() { Kill(); }

bool Child::Running() {
  if (reaped_) return false;
  if (waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
  return !reaped_;
}

int Child::Wait(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (Running() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  if (!reaped_ || !WIFEXITED(status_)) return -1;
  return WEXITSTATUS(status_);
}

int Child::Stop(absl::Duration grace) {
  if (Running()) {
    kill(pid_, SIGTERM);
    if (Wait(grace) == -1 && Running()) Kill();
  }
  return status_;
}

void Child::Kill() {
  if (pid_ <= 0 || reaped_) return;
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
  waitpid(pid_, &status_, 0);
  reaped_ = true;
}

static std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Child::Stdout() const { return ReadFile(out_path_); }
std::string Child::Stderr() const { return ReadFile(err_path_); }

CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env,
                         absl::Duration timeout) {
  CommandResult r;
  auto child = Child::Start(argv, env);
  if (!child.ok()) return r;
  r.exit_code = (*child)->Wait(timeout);
  if ((*child)->Running()) (*child)->Kill();
  r.out = (*child)->Stdout();
  r.err = (*child)->Stderr();
  return r;
}

absl::StatusOr<std::unique_ptr<KbdProcess>> KbdProcess::Start(
    const Options& options) {
  auto k = std::unique_ptr<KbdProcess>(new KbdProcess());
  k->temp_ = std::make_unique<TempDir>();
  k->data_dir_ =
      options.data_dir.empty() ? k->temp_->path() + "/data" : options.data_dir;
  const std::string port_file = k->temp_->path() + "/port";
  std::vector<std::string> argv = {
      BinDir() + "/kbd", "--listen", "127.0.0.1:0", "--data-dir", k->data_dir_,
      "--port-file",     port_file,  "--log-level", "debug"};
  // HTTP on a free port too, so that parallel tests do not share 8080.
  const std::string http_port_file = k->temp_->path() + "/http_port";
  bool own_http = true;
  for (const std::string& a : options.extra_args) {
    if (absl::StartsWith(a, "--http-listen")) own_http = false;
  }
  if (own_http) {
    argv.insert(argv.end(), {"--http-listen", "127.0.0.1:0"});
  }
  argv.insert(argv.end(), {"--http-port-file", http_port_file});
  // kbd compiles every served problem's kernels at start (seconds for the
  // whole library on two cores): tests serve the two gather_linear
  // problems unless they name a problems directory or the problems.
  bool own_problems = true;
  for (const std::string& a : options.extra_args) {
    if (absl::StartsWith(a, "--problems")) own_problems = false;
  }
  if (own_problems) {
    argv.insert(argv.end(),
                {"--problems", "gather_linear_fp32,gather_linear_bf16"});
  }
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  k->token_file_ = k->data_dir_ + "/worker.token";
  for (size_t i = 0; i < options.extra_args.size(); ++i) {
    const std::string& a = options.extra_args[i];
    if (absl::StartsWith(a, "--worker-token-file=")) {
      k->token_file_ = a.substr(a.find('=') + 1);
    } else if (a == "--worker-token-file" &&
               i + 1 < options.extra_args.size()) {
      k->token_file_ = options.extra_args[i + 1];
    }
  }
  auto child = Child::Start(argv);
  if (!child.ok()) return child.status();
  k->child_ = std::move(*child);
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline) {
    const std::string port = ReadFile(port_file);
    if (!port.empty() && port.back() == '\n') {
      k->address_ = absl::StrCat("127.0.0.1:", port.substr(0, port.size() - 1));
      // kbd writes the HTTP port file before the gRPC one.
      const std::string http_port = ReadFile(http_port_file);
      if (!http_port.empty() && http_port.back() == '\n') {
        k->http_address_ = absl::StrCat(
            "127.0.0.1:", http_port.substr(0, http_port.size() - 1));
      }
      {
        absl::MutexLock lock(&token_mu);
        TokenFiles()[k->address_] = k->token_file_;
      }
      return k;
    }
    if (!k->child_->Running()) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return absl::InternalError(
      absl::StrCat("kbd did not start; its log:\n", k->child_->Stderr()));
}

KbdProcess::~KbdProcess() {
  if (child_) child_->Stop();
}

int KbdProcess::Stop() {
  const int status = child_->Stop();
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

absl::StatusOr<std::unique_ptr<Child>> StartWorker(
    const std::string& address, const std::string& runner, int gpu,
    const std::vector<std::string>& extra_args) {
  std::vector<std::string> argv = {
      BinDir() + "/kbworker",
      "--server",
      address,
      "--gpu",
      std::to_string(gpu),
      "--runner",
      runner.empty() ? BinDir() + "/kbrunner" : runner,
      "--lease-wait-ms",
      "2000",
      "--log-level",
      "debug"};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  bool has_token = false;
  for (const std::string& a : extra_args) {
    has_token = has_token || absl::StartsWith(a, "--token-file");
  }
  if (const std::string file = WorkerTokenFileFor(address);
      !has_token && !file.empty()) {
    argv.insert(argv.end(), {"--token-file", file});
  }
  return Child::Start(argv);
}

std::string SourcePath(const std::string& relative_path) {
  // A bundle run elsewhere points KBENCH_SOURCE_DIR at its copy of the tree.
  const char* root = std::getenv("KBENCH_SOURCE_DIR");
  return std::string(root && *root ? root : KBENCH_SOURCE_DIR) + "/" +
         relative_path;
}

std::string ReadSourceFile(const std::string& relative_path) {
  return ReadFile(SourcePath(relative_path));
}

bool HasGpu() {
  static const bool has = CountCudaGpus() > 0;
  return has;
}

}  // namespace kbench::testing
