#include "client/kbctl_app.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/commands.h"
#include "client/session_commands.h"
#include "client/sweep_command.h"

namespace kbench {
namespace {

constexpr char kFooter[] = R"(Environment:
  KBENCH_SERVER   default for --server (else localhost:50051)
  KBENCH_SESSION  default for --session of submit, check, profile, compile,
                  sweep and mcp

Output: the report (or, with --json, the response as JSON) goes to stdout;
progress and errors go to stderr.

Exit codes:
  0  passed, or the command succeeded (commands without a verdict)
  1  the kernel's verdict is not passed: failed, crashed, timed_out,
     rejected, compile_error or cancelled
  2  usage error, input rejected by the server, kbd unreachable, or the
     service failed (verdict error)

Examples:
  kbctl check kernels/examples/gather_linear_naive.cu --shapes odd
  kbctl submit my_kernel.cu --problem gather_linear_fp32
  kbctl compile my_kernel.cu --arch sm_90
  kbctl list --stage running
  kbctl mcp --server host:50051       (an MCP server on stdio, for agents)
  kbctl tools --format openai         (the tool definitions as JSON)
  kbctl session show s-1234 && kbctl diff s-1234 3 5
)";

std::string Getenv(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

struct KernelCommand {
  const char* name;
  v1::JobKind kind;
  const char* help;
  CLI::App* app = nullptr;
};

}  // namespace

int RunKbctl(int argc, char** argv, std::ostream& out, std::ostream& err) {
  GlobalOptions global;
  if (std::string env = Getenv("KBENCH_SERVER"); !env.empty()) {
    global.server = env;
  }
  global.err_is_tty = &err == &std::cerr && isatty(STDERR_FILENO) == 1;

  CLI::App app(
      "kbctl: compile, check, time and profile CUDA kernels on a kbd server",
      "kbctl");
  app.require_subcommand(1);
  app.fallthrough();  // Global flags may follow the command.
  app.footer(kFooter);
  app.set_version_flag("--version", KBENCH_VERSION);
  app.add_option("--server", global.server,
                 "kbd address, host:port (default: $KBENCH_SERVER, else "
                 "localhost:50051)");
  app.add_flag("--json", global.json,
               "print the response as JSON (proto field names) instead of "
               "the text report");
  app.add_option("--timeout", global.timeout_s,
                 "longest wait for a job, in seconds (default 600)")
      ->check(CLI::PositiveNumber);

  KernelOptions kernel;
  std::vector<KernelCommand> kernel_commands = {
      {"submit", v1::JOB_KIND_SUBMIT,
       "compile FILE, check it, then time it against the reference"},
      {"check", v1::JOB_KIND_CORRECTNESS,
       "compile FILE and check its results against the reference"},
      {"profile", v1::JOB_KIND_PROFILE,
       "compile FILE, check it, then profile each launch"},
      {"compile", v1::JOB_KIND_COMPILE,
       "compile FILE with NVRTC (no GPU needed): registers, shared memory, "
       "spills, diagnostics"},
      {"sanitize", v1::JOB_KIND_SANITIZE,
       "run FILE once at a small shape under compute-sanitizer (memcheck, "
       "racecheck, initcheck): findings with source lines"},
  };
  for (KernelCommand& command : kernel_commands) {
    CLI::App* sub = app.add_subcommand(command.name, command.help);
    command.app = sub;
    sub->add_option("FILE", kernel.file, "kernel source file (.cu)")
        ->required();
    sub->add_option("--problem", kernel.problem,
                    "problem name (default: the source's `// @kb problem` "
                    "line, else the server's default)");
    sub->add_option("--shapes", kernel.shape_set,
                    "shape set to run (default: the tool's)");
    sub->add_option("--session", kernel.session,
                    "session id to record the job under (default: "
                    "$KBENCH_SESSION)");
    if (command.kind == v1::JOB_KIND_SANITIZE) {
      sub->add_option("--tool", kernel.sanitize_tools,
                      "tools to run, comma-separated (default: memcheck, "
                      "racecheck, initcheck)")
          ->delimiter(',')
          ->check(CLI::IsMember({"memcheck", "racecheck", "initcheck"}));
    } else if (command.kind != v1::JOB_KIND_COMPILE) {
      sub->add_option("--trials", kernel.trials,
                      "correctness trials per shape (default: the "
                      "problem's)")
          ->check(CLI::Range(1, 1000));
      if (command.kind == v1::JOB_KIND_PROFILE ||
          command.kind == v1::JOB_KIND_SUBMIT) {
        sub->add_flag("--hot", kernel.hot_l2,
                      "time with the inputs warm in L2 (default: cold, L2 "
                      "flushed before each sample)");
      }
      if (command.kind == v1::JOB_KIND_PROFILE) {
        sub->add_option("--preset", kernel.profile_preset,
                        "hardware counters to read: fast (time, DRAM, L2, "
                        "occupancy, coalescing; few passes) or full (every "
                        "figure and warp stalls; default)")
            ->check(CLI::IsMember({"fast", "full"}));
      }
    } else {
      sub->add_option("--arch", kernel.arch,
                      "target, e.g. sm_90 (default: the workers' arch, else "
                      "sm_90)");
    }
    sub->add_flag("--no-wait", kernel.no_wait,
                  "print the job id (or the job as JSON) and return at once");
  }

  std::string job_id;
  CLI::App* specs = app.add_subcommand(
      "specs", "the GPUs of the connected workers and their limits");
  CLI::App* status = app.add_subcommand(
      "status", "a job's current state, or its report when done");
  status->add_option("JOB", job_id, "job id")->required();
  CLI::App* watch = app.add_subcommand(
      "watch", "follow a job until it is done, then print its report");
  watch->add_option("JOB", job_id, "job id")->required();
  CLI::App* cancel = app.add_subcommand("cancel", "cancel a job");
  cancel->add_option("JOB", job_id, "job id")->required();

  ListOptions list_options;
  CLI::App* list = app.add_subcommand("list", "jobs, newest first");
  list->add_option("--session", list_options.session, "only this session's");
  list->add_option("--stage", list_options.stage, "only jobs in this stage")
      ->check(CLI::IsMember(
          {"queued", "compiling", "waiting_gpu", "running", "done"}));
  list->add_option("--limit", list_options.limit,
                   "jobs per page (default 20, at most 200)")
      ->check(CLI::Range(1, 200));
  list->add_option("--page-token", list_options.page_token,
                   "token printed at the end of the previous page");

  std::string problem_name;
  bool verbose = false;
  CLI::App* problems = app.add_subcommand(
      "problems", "the problems: dims, tensors, entry point, shape sets");
  problems->add_option("NAME", problem_name, "only this problem");
  problems->add_flag("--verbose,-v", verbose,
                     "add the statement and the reference pseudo-code");
  std::string suite;
  problems->add_option("--suite", suite,
                       "only the problems of this suite (e.g. collectives)");

  SweepOptions sweep_options;
  CLI::App* sweep = app.add_subcommand(
      "sweep",
      "submit, for every problem of a suite, the kernel file of DIR that "
      "names it (// @kb problem), and print a table with the geomean");
  sweep->add_option("--suite", sweep_options.suite, "the suite, e.g. core")
      ->required();
  sweep->add_option("DIR", sweep_options.dir, "folder of .cu kernel files")
      ->required();
  sweep->add_option("--session", sweep_options.session,
                    "record the submits in this session (default: "
                    "$KBENCH_SESSION)");
  sweep->add_flag("--serial", sweep_options.serial,
                  "submit one kernel at a time, so that each wall time is "
                  "one submit's latency (default: all at once, as one sweep)");

  McpOptions mcp_options;
  CLI::App* mcp = app.add_subcommand(
      "mcp",
      "serve the agent tools over MCP on stdio (JSON-RPC, one message per "
      "line); logs go to stderr");
  mcp->add_option("--session", mcp_options.session,
                  "session to record every tool call in (default: "
                  "$KBENCH_SESSION, else one created on the first call)");
  mcp->add_option("--problem", mcp_options.problem,
                  "problem of the session created (default: the first "
                  "call's, else the server's)");
  mcp->add_option("--log-level", mcp_options.log_level,
                  "stderr log level (default info)")
      ->check(CLI::IsMember(
          {"trace", "debug", "info", "warn", "error", "critical", "off"}));

  std::string tools_format = "openai";
  CLI::App* tools = app.add_subcommand(
      "tools", "print the agent tool definitions as JSON, for an LLM API");
  tools->add_option("--format", tools_format,
                    "openai, anthropic or mcp (default openai)");

  std::string diff_session;
  int turn_a = 0, turn_b = 0;
  CLI::App* diff = app.add_subcommand(
      "diff", "compare two turns of a session: verdicts, time, source diff");
  diff->add_option("SESSION", diff_session, "session id")->required();
  diff->add_option("TURN_A", turn_a, "earlier turn number (seq)")
      ->required()
      ->check(CLI::PositiveNumber);
  diff->add_option("TURN_B", turn_b, "later turn number (seq)")
      ->required()
      ->check(CLI::PositiveNumber);

  CLI::App* session = app.add_subcommand(
      "session", "agent sessions: create one, show its turns, list them");
  session->require_subcommand(1);
  std::string session_problem, session_id;
  int session_limit = 0;
  CLI::App* session_create =
      session->add_subcommand("create", "create a session; prints its id");
  session_create->add_option("--problem", session_problem,
                             "the session's problem (default: set by its "
                             "first tool call)");
  CLI::App* session_show = session->add_subcommand(
      "show", "a session and its turns: seq, tool, verdict, duration, job");
  session_show->add_option("ID", session_id, "session id")->required();
  CLI::App* session_list =
      session->add_subcommand("list", "sessions, most recently updated first");
  session_list
      ->add_option("--limit", session_limit,
                   "at most this many (default 20, at most 200)")
      ->check(CLI::Range(1, 200));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    return ReportError(
        absl::InvalidArgumentError(absl::StrCat(
            e.what(), "; run `kbctl --help` or `kbctl COMMAND --help`")),
        "", false, err);
  }

  for (const KernelCommand& command : kernel_commands) {
    if (!command.app->parsed()) continue;
    if (kernel.session.empty()) kernel.session = Getenv("KBENCH_SESSION");
    return RunKernelCommand(global, command.kind, kernel, out, err);
  }
  if (specs->parsed()) return RunSpecs(global, out, err);
  if (status->parsed()) return RunStatus(global, job_id, out, err);
  if (watch->parsed()) return RunWatch(global, job_id, out, err);
  if (cancel->parsed()) return RunCancel(global, job_id, out, err);
  if (list->parsed()) return RunList(global, list_options, out, err);
  if (problems->parsed()) {
    return RunProblems(global, problem_name, suite, verbose, out, err);
  }
  if (sweep->parsed()) {
    if (sweep_options.session.empty()) {
      sweep_options.session = Getenv("KBENCH_SESSION");
    }
    return RunSweep(global, sweep_options, out, err);
  }
  if (mcp->parsed()) {
    if (mcp_options.session.empty()) {
      mcp_options.session = Getenv("KBENCH_SESSION");
    }
    return RunMcp(global, mcp_options, std::cin, out);
  }
  if (tools->parsed()) return RunTools(tools_format, out, err);
  if (diff->parsed()) {
    return RunDiff(global, diff_session, turn_a, turn_b, out, err);
  }
  if (session_create->parsed()) {
    return RunSessionCreate(global, session_problem, out, err);
  }
  if (session_show->parsed()) {
    return RunSessionShow(global, session_id, out, err);
  }
  if (session_list->parsed()) {
    return RunSessionList(global, session_limit, out, err);
  }
  return ReportError(
      absl::InvalidArgumentError("no command given; run `kbctl --help`"), "",
      false, err);
}

}  // namespace kbench
