// agent_session: one scripted agent session, as a model would run it,
// through `kbctl mcp` (a child process speaking MCP on stdin/stdout) against
// a running kbd with a GPU worker. 14 tool calls: specs, problem, a compile
// error and its fix, a failing and a passing check, profile and submit of
// the naive kernel, the same for the two-stage example, compare_runs of the
// two submits, and specs again. Prints a Markdown table (call, tool,
// isError, wall ms) and the total tool time; exits 1 when a call's isError
// is not the expected one, 2 on a usage or protocol failure.
//
//   agent_session --server 127.0.0.1:50051 [--kbctl PATH] [--source-dir DIR]
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/paths.h"
#include "base/process/spawn.h"
#include "client/kbench_client.h"
#include "nlohmann/json.hpp"

namespace {

using nlohmann::json;

// `kbctl mcp` as a child: requests written to its stdin, replies read from
// its stdout line by line; its stderr is this process's.
class McpChild {
 public:
  ~McpChild() {
    if (in_ >= 0) close(in_);
    if (out_ >= 0) close(out_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  bool Start(const std::vector<std::string>& argv) {
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0) return false;
    if (pipe2(from_child, O_CLOEXEC) != 0) {
      close(to_child[0]);
      close(to_child[1]);
      return false;
    }
    kbench::SpawnOptions spawn;
    spawn.argv = argv;
    spawn.fds = {{0, to_child[0]}, {1, from_child[1]}};
    absl::StatusOr<pid_t> pid = kbench::SpawnProcess(spawn);
    close(to_child[0]);
    close(from_child[1]);
    in_ = to_child[1];
    out_ = from_child[0];
    if (!pid.ok()) {
      std::fprintf(stderr, "agent_session: %s\n",
                   std::string(pid.status().message()).c_str());
      return false;
    }
    pid_ = *pid;
    return true;
  }

  bool WriteLine(const std::string& line) {
    const std::string data = line + "\n";
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = write(in_, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  // The next line; false at end of file.
  bool ReadLine(std::string* line) {
    while (true) {
      const size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        *line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return true;
      }
      char chunk[65536];
      const ssize_t n = read(out_, chunk, sizeof(chunk));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  // Closes stdin and waits for the exit code (-1 for a signal).
  int Finish() {
    close(in_);
    in_ = -1;
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  std::string buffer_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct CallRow {
  std::string label;  // What the call is, e.g. "check failing".
  std::string tool;
  bool expected_error = false;
  bool is_error = false;
  double wall_ms = 0;
  std::string text;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"agent_session: a scripted agent session through kbctl mcp"};
  std::string server = "127.0.0.1:50051";
  std::string kbctl = kbench::ExeDir() + "/kbctl";
  std::string source_dir = KBENCH_SOURCE_DIR;
  app.add_option("--server", server, "kbd address (with a GPU worker)")
      ->capture_default_str();
  app.add_option("--kbctl", kbctl, "path of kbctl (default: next to this)")
      ->capture_default_str();
  app.add_option("--source-dir", source_dir,
                 "repository root, for kernels/examples and tests/gpu/kernels")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  signal(SIGPIPE, SIG_IGN);

  const std::string naive =
      ReadFile(source_dir + "/kernels/examples/gather_linear_naive.cu");
  const std::string two_stage =
      ReadFile(source_dir + "/kernels/examples/gather_linear_two_stage.cu");
  const std::string wrong =
      ReadFile(source_dir + "/tests/gpu/kernels/wrong_no_bias.cu");
  std::string misspelled = naive;
  const size_t at = misspelled.find("= acc;");
  if (naive.empty() || two_stage.empty() || wrong.empty() ||
      at == std::string::npos) {
    std::fprintf(stderr,
                 "agent_session: cannot read the kernels under %s (the naive "
                 "and two-stage examples, tests/gpu/kernels/wrong_no_bias.cu);"
                 " pass --source-dir\n",
                 source_dir.c_str());
    return 2;
  }
  misspelled.replace(at, 6, "= accc;");

  McpChild mcp;
  if (!mcp.Start({kbctl, "mcp", "--server", server})) {
    std::fprintf(stderr, "agent_session: cannot start %s\n", kbctl.c_str());
    return 2;
  }
  int next_id = 0;
  // One request and its reply; null on a broken stream or id mismatch.
  auto rpc = [&](const std::string& method, const json& params) -> json {
    const int id = ++next_id;
    if (!mcp.WriteLine(json({{"jsonrpc", "2.0"},
                             {"id", id},
                             {"method", method},
                             {"params", params}})
                           .dump())) {
      return json();
    }
    std::string line;
    if (!mcp.ReadLine(&line)) return json();
    json reply = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (reply.is_discarded() || reply.value("id", json()) != id) {
      std::fprintf(stderr, "agent_session: unexpected line: %s\n",
                   line.c_str());
      return json();
    }
    return reply;
  };

  const json init =
      rpc("initialize",
          {{"protocolVersion", "2025-11-25"},
           {"capabilities", json::object()},
           {"clientInfo",
            {{"name", "agent_session"}, {"version", KBENCH_VERSION}}}});
  if (!init.contains("result") ||
      !mcp.WriteLine(
          R"({"jsonrpc":"2.0","method":"notifications/initialized"})")) {
    std::fprintf(stderr, "agent_session: the MCP handshake failed\n");
    return 2;
  }

  std::vector<CallRow> rows;
  std::string session;
  // Runs one tool call, adds its row; returns its structuredContent.
  auto call = [&](const std::string& label, const std::string& tool,
                  const json& args, bool expected_error) -> json {
    const auto t0 = std::chrono::steady_clock::now();
    const json reply = rpc("tools/call", {{"name", tool}, {"arguments", args}});
    CallRow row;
    row.label = label;
    row.tool = tool;
    row.expected_error = expected_error;
    row.wall_ms = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - t0)
                      .count();
    const json result = reply.value("result", json::object());
    row.is_error = result.value("isError", true);
    if (result.contains("content") && !result["content"].empty()) {
      row.text = result["content"][0].value("text", "");
    } else {
      row.text = reply.dump();
    }
    rows.push_back(row);
    json structured = result.value("structuredContent", json::object());
    if (session.empty() && structured.contains("session_id") &&
        structured["session_id"].is_string()) {
      session = structured["session_id"].get<std::string>();
    }
    return structured;
  };
  auto kernel = [](const std::string& source) {
    return json{{"kernel_code", source}};
  };

  call("specs", "get_gpu_specs", json::object(), false);
  call("problem", "get_problem", json::object(), false);
  call("compile error", "compile_kernel", kernel(misspelled), true);
  call("compile fixed", "compile_kernel", kernel(naive), false);
  call("check failing", "run_correctness", kernel(wrong), true);
  call("check passing", "run_correctness", kernel(naive), false);
  call("profile naive", "profile_kernel", kernel(naive), false);
  const json submit_naive =
      call("submit naive", "submit_kernel", kernel(naive), false);
  call("compile two-stage", "compile_kernel", kernel(two_stage), false);
  call("check two-stage", "run_correctness", kernel(two_stage), false);
  call("profile two-stage", "profile_kernel", kernel(two_stage), false);
  const json submit_two =
      call("submit two-stage", "submit_kernel", kernel(two_stage), false);

  // The turns of the two submits, from the session.
  int turn_a = 0, turn_b = 0;
  const std::string job_a = submit_naive.value("id", "");
  const std::string job_b = submit_two.value("id", "");
  if (!session.empty() && !job_a.empty() && !job_b.empty()) {
    kbench::KbenchClient client(server, absl::Seconds(30));
    kbench::v1::GetSessionRequest req;
    req.set_session_id(session);
    for (int attempt = 0; attempt < 100 && (turn_a == 0 || turn_b == 0);
         ++attempt) {
      absl::StatusOr<kbench::v1::GetSessionResponse> s = client.GetSession(req);
      if (!s.ok()) break;
      for (const kbench::v1::Turn& t : s->turns()) {
        if (t.job_id() == job_a) turn_a = t.seq();
        if (t.job_id() == job_b) turn_b = t.seq();
      }
      if (turn_a == 0 || turn_b == 0) usleep(50 * 1000);
    }
  }
  call("compare submits", "compare_runs",
       {{"turn_a", std::max(turn_a, 1)}, {"turn_b", std::max(turn_b, 1)}},
       false);
  call("specs again", "get_gpu_specs", json::object(), false);
  const int exit_code = mcp.Finish();

  std::printf("| call | tool | isError | wall ms |\n|---:|---|---|---:|\n");
  double total_ms = 0;
  int mismatches = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const CallRow& r = rows[i];
    const bool ok = r.is_error == r.expected_error;
    total_ms += r.wall_ms;
    std::printf(
        "| %zu | %s (%s) | %s%s | %.0f |\n", i + 1, r.tool.c_str(),
        r.label.c_str(), r.is_error ? "true" : "false",
        ok ? "" : (r.expected_error ? " (expected true)" : " (expected false)"),
        r.wall_ms);
    if (!ok) {
      ++mismatches;
      std::fprintf(stderr, "agent_session: call %zu (%s) isError %s:\n%s\n",
                   i + 1, r.label.c_str(), r.is_error ? "true" : "false",
                   r.text.c_str());
    }
  }
  std::printf("\ntotal tool time: %.2f s over %zu calls (session %s)\n",
              total_ms / 1000, rows.size(), session.c_str());
  if (exit_code != 0) {
    std::fprintf(stderr, "agent_session: kbctl mcp exited with %d\n",
                 exit_code);
    return 2;
  }
  return mismatches == 0 ? 0 : 1;
}
