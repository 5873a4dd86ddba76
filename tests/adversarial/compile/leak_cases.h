// Shared by the compiler red-team tests of this folder (see README.md): the
// attack list, the secrets that must never come back (canary env value and
// file, /etc/passwd, the problem files' hidden shapes, a victim's source),
// each attack's source with the test's paths substituted, and the leak
// detector. Header only (test code).
//
// Thread safety: Env() is created once, on first use, before any compiler
// starts (it sets the environment and the working directory that kbd and
// kbcompile inherit); the rest is reentrant.
#ifndef KBENCH_TESTS_ADVERSARIAL_COMPILE_LEAK_CASES_H_
#define KBENCH_TESTS_ADVERSARIAL_COMPILE_LEAK_CASES_H_

#include <gtest/gtest.h>
#include <stdlib.h>
#include <string.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "compiler/nvrtc_compiler.h"
#include "compiler/sandbox/compile_sandbox.h"
#include "google/protobuf/text_format.h"
#include "kbench/v1/problem.pb.h"
#include "testing/process.h"

namespace kbench::compile_leak {

namespace fs = std::filesystem;
using ::kbench::testing::ReadSourceFile;
using ::kbench::testing::TempDir;

struct Attack {
  std::string name;  // tests/adversarial/compile/NAME.cu
  // The request's filename (sandbox and gRPC; HTTP always sends kernel.cu):
  // "canary_dir" = kernel.cu in the canary's directory, "long" = 64 KiB of
  // 'a'.
  std::string filename;
};

inline void PrintTo(const Attack& a, std::ostream* os) { *os << a.name; }

inline std::vector<Attack> Attacks() {
  std::vector<Attack> out;
  for (const char* n : {"include_abs_quoted",
                        "include_abs_angle",
                        "digraph_include_environ",
                        "digraph_include_passwd",
                        "digraph_include_canary",
                        "digraph_include_next",
                        "trigraph_include",
                        "spaced_include",
                        "line_splice_include",
                        "lexing_hides_include",
                        "import_directive",
                        "macro_include",
                        "token_paste_include",
                        "traversal_angle",
                        "traversal_subdir",
                        "traversal_quoted",
                        "proc_self_cmdline_maps",
                        "proc_self_root",
                        "proc_self_fd0",
                        "proc_self_fd2",
                        "dev_stdin",
                        "data_dir_db",
                        "worker_token",
                        "problem_file_static_assert",
                        "canary_static_assert",
                        "has_include_probe",
                        "pragma_tricks",
                        "line_forging",
                        "error_flood",
                        "cccl_thrust_mr_header",
                        "cccl_thrust_host_system",
                        "cccl_thrust_device_system",
                        "asm_incbin",
                        "embed_directive",
                        "cr_line_ending",
                        "cwd_relative_include",
                        "cccl_thrust_environ",
                        "cccl_thrust_problem_file",
                        "cccl_thrust_worker_token",
                        "holdout_secret",
                        "cxx20_header_import"}) {
    out.push_back({n, ""});
  }
  out.push_back({"file_macro_include", "canary_dir"});
  out.push_back({"long_file_name", "long"});
  return out;
}

inline std::string RandomHex(int n) {
  std::random_device rd;
  std::string s;
  while (static_cast<int>(s.size()) < n) s += absl::StrCat(absl::Hex(rd()));
  return s.substr(0, n);
}

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string SourceDir() {
  const char* root = std::getenv("KBENCH_SOURCE_DIR");
  return root && *root ? root : KBENCH_SOURCE_DIR;
}

// A string that must never come back.
struct Secret {
  std::string what;  // Named in failure messages instead of the text.
  std::string text;
  // In the store and job views by design (the victim's own source).
  bool stored = false;
};

// The canaries, set up once per process before any compiler starts (the
// children and kbd inherit the environment).
struct Canaries {
  TempDir dir;
  std::string env_value = "kbcanaryenv" + RandomHex(20);
  std::string file_secret = "kbcanaryfile" + RandomHex(20);
  std::string file_path = dir.path() + "/canary.txt";
  std::string victim = "kbvictim" + RandomHex(20);
  // The shipped problem plus a fixed hidden set, as an operator's problem
  // file may hold (repository files hold none): its shape names are canaries.
  std::string problem_file = dir.path() + "/gather_linear_fp32.textproto";
  std::string hidden_shape = "kbcanaryshape" + RandomHex(20);
  std::vector<Secret> secrets;

  Canaries() {
    setenv("KBENCH_CANARY_ENV", env_value.c_str(), 1);
    // The compilers' working directory (kbd and kbcompile inherit it): a
    // relative include must not find the canary there.
    fs::current_path(dir.path());
    WriteFile(file_path,
              absl::StrCat(file_secret, " second_", file_secret, "\n"));
    secrets.push_back({"the canary env value (KBENCH_CANARY_ENV)", env_value});
    secrets.push_back({"the canary file's content", file_secret});
    // /proc/self/environ holds the environment the process was started
    // with (not setenv's changes): PATH stands for it where the canary
    // cannot (the raw NVRTC check below, in this process).
    if (const char* path = std::getenv("PATH"); path && strlen(path) >= 8) {
      secrets.push_back(
          {"the PATH entry of the environment", absl::StrCat("PATH=", path)});
    }
    secrets.push_back({"a /proc/self/maps line", "[vdso]"});
    secrets.push_back({"the /etc/passwd root entry", "root:x:0:0"});
    for (absl::string_view line :
         absl::StrSplit(ReadBytes("/etc/passwd"), '\n')) {
      line = absl::StripAsciiWhitespace(line);
      if (line.size() < 12) continue;
      secrets.push_back({absl::StrCat("the /etc/passwd line of user '",
                                      line.substr(0, line.find(':')), "'"),
                         std::string(line)});
    }
    WriteFile(
        problem_file,
        absl::StrCat(
            ReadBytes(SourceDir() + "/kernels/problems/gather_linear_fp32/"
                                    "problem.textproto"),
            "shape_sets { name: \"operator_holdout\" hidden: true "
            "shapes { name: \"",
            hidden_shape,
            "\" dims { key: \"R\" value: 3 } dims { key: \"B\" "
            "value: 5 } dims { key: \"H\" value: 7 } dims { key: "
            "\"K\" value: 9 } } }\n"));
    secrets.push_back(
        {"the hidden shape of an operator's problem file", hidden_shape});
    // has_include_probe pastes this identifier only if its probe succeeded.
    secrets.push_back({"the __has_include probe's marker", "kbleak_present"});
    secrets.push_back({"the victim's kernel source", victim, true});
  }

  // A data dir holding a worker token and a store-like file with the
  // victim's source, for attacks run against the bare sandbox.
  void FakeDataDir(const std::string& dir, std::vector<Secret>* out) const {
    fs::create_directories(dir);
    const std::string token = "kbworkertoken" + RandomHex(20);
    WriteFile(dir + "/worker.token", token + "\n");
    WriteFile(dir + "/kbench.db", absl::StrCat("victim_source ", victim, "\n"));
    out->push_back({"the worker token", token});
    const std::string holdout = "kbholdoutsecret" + RandomHex(24);
    WriteFile(dir + "/holdout.secret", holdout + "\n");
    out->push_back({"the holdout secret", holdout});
  }
};

inline const Canaries& Env() {
  // Destroyed at exit, so that the canary's temp dir goes with it.
  static const Canaries c;
  return c;
}

// The attack's source with the test's paths in, and its request filename.
inline std::string AttackSource(const Attack& a, const std::string& data_dir) {
  std::string s =
      ReadSourceFile(absl::StrCat("tests/adversarial/compile/", a.name, ".cu"));
  absl::StrReplaceAll({{"@CANARY_FILE@", Env().file_path},
                       {"@CANARY_DIR@", Env().dir.path()},
                       {"@DATA_DIR@", data_dir},
                       {"@PROBLEM_FILE@", Env().problem_file},
                       {"@LONG_NAME@", std::string(64 << 10, 'a')},
                       {"@CR@", "\r"},
                       {"@VT@", "\v"},
                       {"@FF@", "\f"}},
                      &s);
  return s;
}
inline std::string AttackFilename(const Attack& a) {
  if (a.filename == "canary_dir") return Env().dir.path() + "/kernel.cu";
  if (a.filename == "long") return std::string(64 << 10, 'a');
  return a.name + ".cu";
}

// What of `secrets` appears in `text`, as "X (at byte N)" without the text.
inline std::vector<std::string> Leaks(absl::string_view text,
                                      const std::vector<Secret>& secrets,
                                      bool stored_view) {
  std::vector<std::string> out;
  for (const Secret& s : secrets) {
    if (stored_view && s.stored) continue;
    if (s.text.empty()) continue;
    const size_t at = text.find(s.text);
    if (at != absl::string_view::npos) {
      out.push_back(
          absl::StrCat(s.what, " (at byte ", at, " of ", text.size(), ")"));
    }
  }
  return out;
}

// `text` for the test's log: each secret replaced by <what>, escaped, cut to
// 240 bytes (env KBENCH_LEAK_SHOW_BYTES: more); so a run shows what each attack
// got back without showing a leaked file.
inline std::string Shown(std::string text, const std::vector<Secret>& secrets) {
  for (const Secret& s : secrets) {
    if (!s.text.empty()) {
      absl::StrReplaceAll({{s.text, absl::StrCat("<", s.what, ">")}}, &text);
    }
  }
  size_t max = 240;
  if (const char* v = std::getenv("KBENCH_LEAK_SHOW_BYTES")) {
    absl::SimpleAtoi(v, &max);
  }
  const bool cut = text.size() > max;
  return absl::StrCat(absl::CHexEscape(text.substr(0, max)), cut ? "..." : "");
}

inline void Outcome(const std::string& attack, const std::string& where,
                    const std::string& text,
                    const std::vector<Secret>& secrets) {
  std::cout << "[ outcome  ] " << attack << " via " << where << ": "
            << Shown(text, secrets) << std::endl;
}

#define EXPECT_NO_LEAK(text, secrets, stored_view, attack, where)          \
  do {                                                                     \
    const std::vector<std::string> leaks_ =                                \
        Leaks((text), (secrets), (stored_view));                           \
    EXPECT_TRUE(leaks_.empty())                                            \
        << "LEAK: vector " << (attack) << " via " << (where) << " leaked " \
        << absl::StrJoin(leaks_, "; ");                                    \
  } while (false)

// A valid kernel that misses the compile cache (a fresh comment each call).
inline std::string FreshValidKernel(const std::string& after) {
  static int n = 0;
  return absl::StrCat(ReadSourceFile("kernels/examples/gather_linear_naive.cu"),
                      "// compiled after ", after, ", call ", ++n, "\n");
}

inline CompileSandbox::Options SandboxOptions() {
  CompileSandbox::Options o;
  o.kbcompile_path = ::kbench::testing::BinDir() + "/kbcompile";
  o.children = 1;
  o.cpu_limit = absl::Seconds(15);
  // /proc/self/fd/0 and /dev/stdin block on the request pipe until this.
  o.wall_limit = absl::Seconds(10);
  o.compile_options = NvrtcCompiler().options();
  return o;
}

inline std::string AttackName(const ::testing::TestParamInfo<Attack>& info) {
  return info.param.name;
}

}  // namespace kbench::compile_leak

#endif  // KBENCH_TESTS_ADVERSARIAL_COMPILE_LEAK_CASES_H_
