// The kbctl commands, one function each. Every function writes the
// command's output (text or JSON) to `out`, progress and errors to `err`,
// and returns kbctl's exit code:
//   0  passed, or the command succeeded (for commands without a verdict);
//   1  the kernel's verdict is not passed (failed, crashed, timed_out,
//      rejected, compile_error, cancelled);
//   2  usage error, input rejected by the server, service unreachable or
//      failed (verdict error included).
// Errors are written as "kbctl: <STATUS_CODE_NAME>: <message>".
//
// Thread safety: each call makes its own client; calls are independent.
#ifndef KBENCH_CLIENT_COMMANDS_H_
#define KBENCH_CLIENT_COMMANDS_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/kbench_client.h"
#include "google/protobuf/message.h"
#include "kbench/v1/kbench.pb.h"
#include "kbench/v1/report.pb.h"

namespace kbench {

inline constexpr int kExitOk = 0;
inline constexpr int kExitNotPassed = 1;
inline constexpr int kExitError = 2;

// The global flags.
struct GlobalOptions {
  // Address of kbd, "host:port".
  std::string server = "localhost:50051";
  // Print the response messages as JSON instead of text.
  bool json = false;
  // Longest wait for a job to finish, in seconds; also caps every call.
  double timeout_s = 600;
  // `err` is a terminal: show progress as one line updated in place.
  bool err_is_tty = false;
};

// Flags of submit, check, profile, compile and sanitize.
struct KernelOptions {
  // Path of the kernel source.
  std::string file;
  // Problem name; empty lets the server use the `// @kb problem` line.
  std::string problem;
  // Shape set; empty uses the tool's default.
  std::string shape_set;
  // Session id the job is recorded under; empty for none.
  std::string session;
  // Correctness trials per shape; 0 uses the problem's.
  int trials = 0;
  // Target arch of compile, e.g. "sm_90"; empty uses the server's.
  std::string arch;
  // Print the job id (or the job as JSON) and return at once.
  bool no_wait = false;
  // sanitize: compute-sanitizer tools to run; empty runs all three.
  std::vector<std::string> sanitize_tools;
  // profile, submit: time with the inputs warm in L2 (no flush).
  bool hot_l2 = false;
  // profile: the counter preset, "fast" or "full"; empty uses the server's
  // default (full).
  std::string profile_preset;
};

// Flags of list.
struct ListOptions {
  // Only jobs of this session; empty for all.
  std::string session;
  // Only jobs in this stage ("queued", ..., "done"); empty for all.
  std::string stage;
  // Page size; 0 uses the server's default.
  int limit = 0;
  // Token from the previous page.
  std::string page_token;
};

// 0 for passed, 1 for a verdict that blames the kernel, 2 for error and
// unspecified.
int ExitCodeForVerdict(v1::Verdict verdict);

// Reads a kernel source file. Errors name the path and the reason.
absl::StatusOr<std::string> ReadSourceFile(const std::string& path);

// Writes "kbctl: <CODE>: <message>" for `status` to `err` and returns 2.
// UNAVAILABLE with `unreachable` adds the address tried and how to start
// kbd.
// Deadline of calls that return at once: 60 s, or --timeout when shorter.
absl::Duration UnaryTimeout(const GlobalOptions& global);

// Reports `status` (noting an unreachable server) and returns the exit code.
int FailCommand(const absl::Status& status, const GlobalOptions& global,
                const KbenchClient& client, std::ostream& err);

// Writes `message` as one line of JSON (proto field names, defaults shown).
int PrintJson(const google::protobuf::Message& message, std::ostream& out,
              std::ostream& err);

int ReportError(const absl::Status& status, const std::string& server,
                bool unreachable, std::ostream& err);

// submit / check / profile / compile: submits FILE as a job of `kind`,
// waits for it with live progress and prints its report.
int RunKernelCommand(const GlobalOptions& global, v1::JobKind kind,
                     const KernelOptions& options, std::ostream& out,
                     std::ostream& err);

// specs: the connected GPU workers.
int RunSpecs(const GlobalOptions& global, std::ostream& out, std::ostream& err);

// status JOB: the job as it is now; the exit code follows its verdict once
// it is done (0 while it is not).
int RunStatus(const GlobalOptions& global, const std::string& job_id,
              std::ostream& out, std::ostream& err);

// watch JOB: live progress until the job is done, then its report.
int RunWatch(const GlobalOptions& global, const std::string& job_id,
             std::ostream& out, std::ostream& err);

// list: one line per job, newest first.
int RunList(const GlobalOptions& global, const ListOptions& options,
            std::ostream& out, std::ostream& err);

// problems [NAME] [--suite S]: every problem (of suite S), or the one
// named; then the suites, and the problem files kbd refused.
int RunProblems(const GlobalOptions& global, const std::string& name,
                const std::string& suite, bool verbose, std::ostream& out,
                std::ostream& err);

// cancel JOB: cancels the job and prints its state.
int RunCancel(const GlobalOptions& global, const std::string& job_id,
              std::ostream& out, std::ostream& err);

}  // namespace kbench

#endif  // KBENCH_CLIENT_COMMANDS_H_
