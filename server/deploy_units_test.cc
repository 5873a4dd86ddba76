// Checks the files of deploy/: `systemd-analyze verify` accepts both units
// (with stub binaries in place of the installed ones), the units keep the
// settings the deployment relies on, and the sample configs parse with
// CLI11's config reader.
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string DeployDir() { return std::string(KBENCH_SOURCE_DIR) + "/deploy"; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  ASSERT_TRUE(out.good()) << "cannot write " << path;
  out << text;
}

// systemd-analyze from the usual places, else from PATH; "" if absent.
std::string FindSystemdAnalyze() {
  std::vector<std::string> dirs = {"/usr/bin", "/bin"};
  if (const char* path = getenv("PATH")) {
    for (absl::string_view dir : absl::StrSplit(path, ':')) {
      if (!dir.empty()) dirs.emplace_back(dir);
    }
  }
  for (const std::string& dir : dirs) {
    std::string candidate = dir + "/systemd-analyze";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string ShellQuote(const std::string& s) {
  return "'" + absl::StrReplaceAll(s, {{"'", "'\\''"}}) + "'";
}

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together.
};

CommandResult RunShell(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    result.output.append(buffer, n);
  }
  int status = pclose(pipe);
  if (status != -1 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

// The setting lines of a unit file: no comments, no blank lines.
std::set<std::string> Settings(const std::string& unit_text) {
  std::set<std::string> settings;
  for (absl::string_view line : absl::StrSplit(unit_text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    settings.emplace(line);
  }
  return settings;
}

// Lines of systemd-analyze output that are about the given unit files,
// leaving out the "is not executable" lines about missing binaries.
std::vector<std::string> ComplaintsAbout(
    const std::string& output, const std::vector<std::string>& units) {
  std::vector<std::string> complaints;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    bool about_unit = false;
    for (const std::string& unit : units) {
      if (absl::StrContains(line, unit)) about_unit = true;
    }
    if (about_unit && !absl::StrContains(line, "is not executable")) {
      complaints.emplace_back(line);
    }
  }
  return complaints;
}

class DeployUnitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    analyze_ = FindSystemdAnalyze();
    if (analyze_.empty()) {
      GTEST_SKIP() << "systemd-analyze is not installed (package systemd); "
                      "the unit files are not verified";
    }
    std::string tmpl =
        (fs::temp_directory_path() / "kb_deploy_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    bin_ = dir_ + "/bin";
    units_ = dir_ + "/units";
    fs::create_directories(bin_);
    fs::create_directories(units_);
    for (const char* name : {"kbd", "kbworker"}) {
      std::string stub = bin_ + "/" + name;
      WriteFile(stub, "#!/bin/sh\nexit 0\n");
      ASSERT_EQ(chmod(stub.c_str(), 0755), 0);
    }
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Copies deploy/<name> into the units dir with /usr/local/bin/ pointing at
  // the stubs, inserting `extra` after the [Service] line.
  void CopyUnit(const std::string& name, const std::string& extra = "") {
    std::string text = ReadFile(DeployDir() + "/" + name);
    ASSERT_THAT(text, HasSubstr("ExecStart=/usr/local/bin/"));
    text = absl::StrReplaceAll(text, {{"/usr/local/bin/", bin_ + "/"}});
    if (!extra.empty()) {
      text =
          absl::StrReplaceAll(text, {{"[Service]\n", "[Service]\n" + extra}});
    }
    WriteFile(units_ + "/" + name, text);
  }

  // systemd-analyze verify on units in the units dir; a template is named
  // by an instance (kbworker@0.service) and found beside it.
  CommandResult Verify(const std::vector<std::string>& units) {
    std::string files;
    for (const std::string& unit : units) {
      absl::StrAppend(&files, " ", ShellQuote("./" + unit));
    }
    // --recursive-errors=no (systemd >= 250) keeps problems of the host's
    // own units (multi-user.target, ...) out of the exit status.
    std::string base = absl::StrCat("cd ", ShellQuote(units_), " && ",
                                    ShellQuote(analyze_), " verify --man=no");
    CommandResult result = RunShell(base + " --recursive-errors=no" + files);
    if (absl::StrContains(result.output, "recursive-errors")) {
      result = RunShell(base + files);  // An older systemd-analyze.
    }
    return result;
  }

  std::string analyze_;
  std::string dir_;
  std::string bin_;
  std::string units_;
};

TEST_F(DeployUnitsTest, SystemdAnalyzeVerifyAcceptsBothUnits) {
  CopyUnit("kbd.service");
  CopyUnit("kbworker@.service");
  std::vector<std::string> units = {"kbd.service", "kbworker@0.service"};
  CommandResult result = Verify(units);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  std::vector<std::string> complaints = ComplaintsAbout(
      result.output,
      {"kbd.service", "kbworker@.service", "kbworker@0.service"});
  EXPECT_TRUE(complaints.empty()) << absl::StrJoin(complaints, "\n");
}

// The check above must be able to fail: an unknown key is reported.
TEST_F(DeployUnitsTest, SystemdAnalyzeVerifyReportsABrokenUnit) {
  CopyUnit("kbd.service", "NoSuchSetting=1\n");
  CommandResult result = Verify({"kbd.service"});
  std::vector<std::string> complaints =
      ComplaintsAbout(result.output, {"kbd.service"});
  ASSERT_FALSE(complaints.empty()) << result.output;
  EXPECT_THAT(absl::StrJoin(complaints, "\n"), HasSubstr("NoSuchSetting"));
}

TEST(DeployUnitsContentTest, KbdUnitKeepsItsSettings) {
  std::set<std::string> s = Settings(ReadFile(DeployDir() + "/kbd.service"));
  for (const char* want : {
           "Type=simple",
           "ExecStart=/usr/local/bin/kbd --config /etc/kbench/kbd.conf",
           "User=kbench",
           "StateDirectory=kbench",
           "Restart=on-failure",
           "NoNewPrivileges=yes",
           "ProtectSystem=strict",
           "ReadWritePaths=/var/lib/kbench",
           "PrivateTmp=yes",
           "WantedBy=multi-user.target",
       }) {
    EXPECT_EQ(s.count(want), 1u) << "kbd.service lacks " << want;
  }
}

TEST(DeployUnitsContentTest, WorkerUnitKeepsGpuAccess) {
  std::string text = ReadFile(DeployDir() + "/kbworker@.service");
  std::set<std::string> s = Settings(text);
  for (const char* want : {
           "ExecStart=/usr/local/bin/kbworker --config "
           "/etc/kbench/kbworker.conf --gpu %i",
           "Restart=always",
           "After=network-online.target nvidia-persistenced.service "
           "kbd.service",
           "Wants=network-online.target",
           "User=kbench",
           "WantedBy=multi-user.target",
       }) {
    EXPECT_EQ(s.count(want), 1u) << "kbworker@.service lacks " << want;
  }
  // Any of these would close /dev/nvidia* (ProtectClock implies a
  // DeviceAllow= list), in the worker and in kbd's local workers alike.
  for (const char* unit : {"kbworker@.service", "kbd.service"}) {
    for (const std::string& setting :
         Settings(ReadFile(absl::StrCat(DeployDir(), "/", unit)))) {
      for (const char* banned : {"PrivateDevices=", "DevicePolicy=",
                                 "DeviceAllow=", "ProtectClock="}) {
        EXPECT_FALSE(absl::StartsWith(setting, banned))
            << unit << " has " << setting;
      }
    }
  }
}

// Parses `file` as the given program's config with CLI11 (the parser kbd and
// kbworker use), refusing unknown keys.
void ParseConfig(CLI::App& app, const std::string& file) {
  app.set_config("--config");
  app.allow_config_extras(CLI::config_extras_mode::error);
  std::vector<std::string> args = {app.get_name(), "--config", file};
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    ADD_FAILURE() << file << ": " << e.what();
  }
}

TEST(DeployConfigTest, KbdConfParsesWithCli11) {
  CLI::App app("kbd");
  std::string listen, http_listen, data_dir, problems_dir, local_worker;
  int compile_threads = -1, cpu_s = -1, wall_s = -1, memory_mb = -1;
  app.add_option("--compile-cpu-limit-s", cpu_s);
  app.add_option("--compile-wall-limit-s", wall_s);
  app.add_option("--compile-memory-limit-mb", memory_mb);
  app.add_option("--listen", listen);
  app.add_option("--http-listen", http_listen);
  app.add_option("--data-dir", data_dir);
  app.add_option("--problems-dir", problems_dir);
  app.add_option("--local-worker", local_worker);
  app.add_option("--compile-threads", compile_threads);
  ParseConfig(app, DeployDir() + "/kbd.conf");
  EXPECT_EQ(listen, "127.0.0.1:50051");
  EXPECT_EQ(http_listen, "127.0.0.1:8080");
  EXPECT_EQ(data_dir, "/var/lib/kbench");
  EXPECT_EQ(problems_dir, "/usr/local/share/kbench/problems");
  EXPECT_EQ(local_worker, "off");
  EXPECT_EQ(compile_threads, 0);
  EXPECT_EQ(cpu_s, 20);
  EXPECT_EQ(wall_s, 30);
  EXPECT_EQ(memory_mb, 4096);
}

TEST(DeployConfigTest, KbworkerConfParsesWithCli11) {
  CLI::App app("kbworker");
  std::string server, runner;
  int gpu = -1;
  app.add_option("--server", server);
  app.add_option("--runner", runner);
  app.add_option("--gpu", gpu);
  ParseConfig(app, DeployDir() + "/kbworker.conf");
  EXPECT_EQ(server, "127.0.0.1:50051");
  EXPECT_EQ(runner, "/usr/local/bin/kbrunner");
  EXPECT_EQ(gpu, -1);  // Comes from the unit's command line, not the file.
}

}  // namespace
}  // namespace kbench
