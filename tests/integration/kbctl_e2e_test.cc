// kbctl against a real kbd on loopback, as a user runs it: compile, the GPU
// commands without a worker, problems, list and status, JSON output and
// exit codes; and with a fake-runner worker, check, submit and sweep.
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"
#include "testing/process.h"

namespace kbench {
namespace {

using ::kbench::testing::BinDir;
using ::kbench::testing::CommandResult;
using ::kbench::testing::KbdProcess;
using ::kbench::testing::RunCommand;

std::string Example(const std::string& name) {
  return std::string(KBENCH_SOURCE_DIR) + "/kernels/examples/" + name;
}

class KbctlE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kbd = KbdProcess::Start({});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = std::move(*kbd);
  }
  CommandResult Kbctl(std::vector<std::string> args) {
    args.insert(args.begin(),
                {BinDir() + "/kbctl", "--server", kbd_->address()});
    return RunCommand(args);
  }
  // A kbworker with the fake runner, connected once `kbctl specs` answers.
  absl::StatusOr<std::unique_ptr<testing::Child>> StartFakeWorker() {
    auto worker =
        testing::StartWorker(kbd_->address(), BinDir() + "/kb_fake_runner");
    if (!worker.ok()) return worker;
    for (int i = 0; i < 200; ++i) {
      if (Kbctl({"specs"}).exit_code == 0) break;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return worker;
  }
  std::string WriteTemp(const std::string& text) {
    std::string path = dir_.path() + "/k" + std::to_string(++n_) + ".cu";
    std::ofstream(path) << text;
    return path;
  }

  testing::TempDir dir_;
  int n_ = 0;
  std::unique_ptr<KbdProcess> kbd_;
};

TEST_F(KbctlE2eTest, CompilePrintsTheReportAndExitsZero) {
  CommandResult r = Kbctl({"compile", Example("gather_linear_naive.cu")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("gather_linear"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("registers"), std::string::npos) << r.out;
}

TEST_F(KbctlE2eTest, CompileErrorExitsOneWithTheLine) {
  const std::string path = WriteTemp(
      "// @kb launch gather_linear grid(B) block(32)\n"
      "extern \"C\" __global__ void gather_linear(const float* x, const float* "
      "w, const float* bias, float* out, int R, int B, int H, int K) {\n"
      "  out[0] = nope;\n}\n");
  CommandResult r = Kbctl({"compile", path});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out + r.err, ":3: error:")) << r.out << r.err;
}

TEST_F(KbctlE2eTest, JsonOutputParses) {
  CommandResult r =
      Kbctl({"--json", "compile", Example("gather_linear_two_stage.cu")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stage"], "STAGE_DONE");
  EXPECT_EQ(j["result"]["compile"]["kernels"].size(), 2u);
}

TEST_F(KbctlE2eTest, GpuCommandsWithoutAWorkerExitTwoAndSaySo) {
  for (const char* cmd : {"check", "submit", "profile"}) {
    CommandResult r = Kbctl({cmd, Example("gather_linear_naive.cu")});
    EXPECT_EQ(r.exit_code, 2) << cmd;
    EXPECT_NE(r.err.find("no GPU worker is connected"), std::string::npos)
        << cmd << ": " << r.err;
  }
  CommandResult specs = Kbctl({"specs"});
  EXPECT_EQ(specs.exit_code, 2);
  EXPECT_NE(specs.err.find("FAILED_PRECONDITION"), std::string::npos)
      << specs.err;
}

TEST_F(KbctlE2eTest, ProblemsListAndStatus) {
  CommandResult p = Kbctl({"problems"});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("gather_linear_fp32"), std::string::npos);
  EXPECT_NE(p.out.find("gather_linear_bf16"), std::string::npos);

  CommandResult c =
      Kbctl({"--json", "compile", Example("gather_linear_naive.cu")});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const std::string id = nlohmann::json::parse(c.out)["id"];
  CommandResult list = Kbctl({"list"});
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_NE(list.out.find(id), std::string::npos) << list.out;
  CommandResult status = Kbctl({"status", id});
  EXPECT_EQ(status.exit_code, 0);
  EXPECT_NE(status.out.find(id), std::string::npos) << status.out;
  CommandResult missing = Kbctl({"status", "j-missing"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("NOT_FOUND"), std::string::npos) << missing.err;
}

TEST_F(KbctlE2eTest, CheckAndSubmitThroughAWorker) {
  auto worker = StartFakeWorker();
  ASSERT_TRUE(worker.ok()) << worker.status();
  CommandResult check = Kbctl({"check", Example("gather_linear_naive.cu")});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("passed"), std::string::npos) << check.out;
  CommandResult submit = Kbctl({"submit", Example("gather_linear_naive.cu")});
  EXPECT_EQ(submit.exit_code, 0) << submit.out << submit.err;
  EXPECT_NE(submit.out.find("speedup"), std::string::npos) << submit.out;
  EXPECT_EQ(submit.out.find("expert"), std::string::npos) << submit.out;
  const std::string crash = WriteTemp(
      testing::ReadSourceFile("kernels/examples/gather_linear_naive.cu") +
      "\n// FAKE_CRASH\n");
  CommandResult crashed = Kbctl({"check", crash});
  EXPECT_EQ(crashed.exit_code, 1) << crashed.out << crashed.err;
  EXPECT_NE(crashed.out.find("crashed"), std::string::npos) << crashed.out;
}

// A problem with an expert baseline: kbd compiles it with the golden and
// the baseline, and the report places the kernel between the two (the
// stand-in runner's figures: kernel 10 us, expert 12 us).
TEST_F(KbctlE2eTest, TheReportPlacesTheKernelAgainstTheExpertBaseline) {
  KbdProcess::Options options;
  options.extra_args = {"--problems=rmsnorm_fp32"};
  auto kbd = KbdProcess::Start(options);
  ASSERT_TRUE(kbd.ok()) << kbd.status();
  kbd_ = std::move(*kbd);
  auto worker = StartFakeWorker();
  ASSERT_TRUE(worker.ok()) << worker.status();
  CommandResult submit =
      Kbctl({"submit", std::string(KBENCH_SOURCE_DIR) +
                           "/kernels/problems/rmsnorm_fp32/example.cu"});
  EXPECT_EQ(submit.exit_code, 0) << submit.out << submit.err;
  EXPECT_NE(submit.out.find("expert baseline (fused RMSNorm: one kernel, a "
                            "block per row"),
            std::string::npos)
      << submit.out;
  EXPECT_NE(submit.out.find("against it: 1.20x faster"), std::string::npos)
      << submit.out;
}

TEST_F(KbctlE2eTest, SweepSubmitsOneKernelPerProblemOfTheSuite) {
  auto worker = StartFakeWorker();
  ASSERT_TRUE(worker.ok()) << worker.status();
  // DIR: a kernel for one of the suite's two problems (fake: 5 us against
  // the fake reference's 20 us), a second file for the same problem, a
  // file naming no problem and one that is not a kernel file.
  testing::TempDir dir;
  const std::string naive =
      testing::ReadSourceFile("kernels/examples/gather_linear_naive.cu");
  std::ofstream(dir.path() + "/a_naive.cu") << naive << "// FAKE_KERNEL_US=5\n";
  std::ofstream(dir.path() + "/b_again.cu") << naive;
  std::ofstream(dir.path() + "/c_none.cu") << "__global__ void k() {}\n";
  std::ofstream(dir.path() + "/notes.txt") << "not a kernel\n";
  std::ofstream(dir.path() + "/my kernel (v2).cu") << naive;
  std::ofstream(dir.path() + "/d_other.cu")
      << "// @kb problem softmax_fp32\n// @kb launch k grid(1) block(1)\n"
      << "__global__ void k() {}\n";
  CommandResult r = Kbctl({"sweep", "--suite", "collectives", dir.path()});
  // The bf16 problem has no kernel: not every problem passed.
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("sweep of suite collectives: 2 problems"),
            std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find("| gather_linear_bf16 | - | no kernel | - | - | - | - |"),
      std::string::npos)
      << r.out;
  // One sweep on kbd: its id is on stderr, for `kbctl watch` of its jobs.
  EXPECT_NE(r.err.find("sweep: sw-"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("| gather_linear_fp32 | a_naive.cu | passed | 4.00x |"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("geomean speedup over the 1 passed: 4.00x"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("b_again.cu: skipped, a_naive.cu already names "
                       "problem gather_linear_fp32"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("c_none.cu: skipped, no `// @kb problem NAME` line"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("notes.txt"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("my kernel (v2).cu: skipped, kbd takes file names"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("d_other.cu: skipped, its problem 'softmax_fp32' is "
                       "not in suite 'collectives'"),
            std::string::npos)
      << r.out;

  // --serial: the same table, one submit at a time.
  CommandResult serial =
      Kbctl({"sweep", "--serial", "--suite", "collectives", dir.path()});
  EXPECT_EQ(serial.exit_code, 1) << serial.out << serial.err;
  EXPECT_NE(
      serial.out.find("| gather_linear_fp32 | a_naive.cu | passed | 4.00x |"),
      std::string::npos)
      << serial.out;
  EXPECT_EQ(serial.err.find("sweep: sw-"), std::string::npos) << serial.err;

  // --json: the Sweep, as GetSweep returns it.
  CommandResult json_out =
      Kbctl({"--json", "sweep", "--suite", "collectives", dir.path()});
  EXPECT_EQ(json_out.exit_code, 1) << json_out.err;
  const nlohmann::json sweep =
      nlohmann::json::parse(json_out.out, nullptr,
                            /*allow_exceptions=*/false);
  ASSERT_TRUE(sweep.is_object()) << json_out.out;
  EXPECT_EQ(sweep.value("suite", ""), "collectives");
  EXPECT_EQ(sweep.value("passed", 0), 1);
  EXPECT_TRUE(sweep.value("done", false));
  ASSERT_EQ(sweep["rows"].size(), 2u);
  // The same table on the dashboard's API; a bad id is 400, an unknown 404.
  httplib::Client http(kbd_->http_address());
  auto got = http.Get("/api/sweeps/" + sweep.value("id", std::string()));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->status, 200) << got->body;
  const nlohmann::json api = nlohmann::json::parse(got->body, nullptr, false);
  EXPECT_EQ(api.value("passed", 0), 1) << got->body;
  EXPECT_EQ(api["rows"].size(), 2u);
  auto unknown_id = http.Get("/api/sweeps/sw-000000000000");
  ASSERT_TRUE(unknown_id);
  EXPECT_EQ(unknown_id->status, 404);
  auto bad_id = http.Get("/api/sweeps/a%20b");
  ASSERT_TRUE(bad_id);
  EXPECT_EQ(bad_id->status, 400);

  CommandResult unknown = Kbctl({"sweep", "--suite", "nope", dir.path()});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown suite 'nope'"), std::string::npos)
      << unknown.err;
  CommandResult no_dir =
      Kbctl({"sweep", "--suite", "collectives", dir.path() + "/missing"});
  EXPECT_EQ(no_dir.exit_code, 2);
  EXPECT_NE(no_dir.err.find("is not a folder of kernel files"),
            std::string::npos)
      << no_dir.err;
}

// Out of time: exit 2 after the table, which shows where each job stands;
// --serial submits nothing more once its one deadline has passed.
TEST_F(KbctlE2eTest, ASweepOutOfTimeShowsWhereEachJobStands) {
  auto worker = StartFakeWorker();
  ASSERT_TRUE(worker.ok()) << worker.status();
  testing::TempDir dir;
  // The suite's order is by name: bf16 (slow) first, then fp32.
  std::ofstream(dir.path() + "/a_slow.cu")
      << testing::ReadSourceFile("kernels/examples/gather_linear_naive_bf16.cu")
      << "// FAKE_SLOW_MS=4000\n";
  std::ofstream(dir.path() + "/b_fp32.cu")
      << testing::ReadSourceFile("kernels/examples/gather_linear_naive.cu");
  CommandResult serial = Kbctl({"--timeout", "1", "sweep", "--serial",
                                "--suite", "collectives", dir.path()});
  EXPECT_EQ(serial.exit_code, 2) << serial.out << serial.err;
  EXPECT_NE(serial.err.find("DEADLINE_EXCEEDED"), std::string::npos)
      << serial.err;
  EXPECT_NE(serial.out.find("| gather_linear_bf16 | a_slow.cu | running |"),
            std::string::npos)
      << serial.out;
  EXPECT_NE(serial.out.find("| gather_linear_fp32 | b_fp32.cu | not run |"),
            std::string::npos)
      << serial.out;
}

}  // namespace
}  // namespace kbench
