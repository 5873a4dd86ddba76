// A problem added as data, with no rebuild: the row_mean_fp32 folder of
// tests/integration/problems/ (problem.textproto, its golden kernel, its
// baseline and an example) dropped into a fresh problems directory beside
// the shipped gather_linear problems, with two broken problems. kbd starts,
// compiles every golden, baseline and example kernel (in its kbcompile
// children), refuses the broken two with their files and lines, and
// serves the rest: ListProblems by suite over gRPC, /api/problems over
// HTTP, `kbctl problems --suite`, and compile_kernel of the new problem's
// example.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "client/kbench_client.h"
#include "nlohmann/json.hpp"
#include "testing/process.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using ::kbench::testing::BinDir;
using ::kbench::testing::CommandResult;
using ::kbench::testing::KbdProcess;
using ::kbench::testing::RunCommand;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kSource = KBENCH_SOURCE_DIR;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::string Replace(std::string text, const std::string& from,
                    const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

class ProblemLibraryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // problems/ and examples/ side by side, as in kernels/.
    const fs::path root = dir_.path();
    problems_ = root / "problems";
    fs::create_directories(problems_);
    fs::copy(kSource / "kernels/examples", root / "examples");
    // Two of the shipped problems (the whole library would only make
    // kbd's start slower here).
    for (const char* name : {"gather_linear_fp32", "gather_linear_bf16"}) {
      fs::copy(kSource / "kernels/problems" / name, problems_ / name);
    }
    const fs::path row_mean =
        kSource / "tests/integration/problems/row_mean_fp32";
    fs::copy(row_mean, problems_ / "row_mean_fp32");
    // A golden that does not compile (line 5 is not C++).
    const fs::path bad = problems_ / "bad_golden";
    fs::copy(row_mean, bad);
    WriteText(bad / "problem.textproto",
              Replace(ReadText(bad / "problem.textproto"),
                      "name: \"row_mean_fp32\"", "name: \"bad_golden\""));
    WriteText(bad / "example.cu",
              Replace(ReadText(bad / "example.cu"), "@kb problem row_mean_fp32",
                      "@kb problem bad_golden"));
    std::string golden = ReadText(bad / "golden.cu");
    std::vector<std::string> lines;
    std::istringstream in(golden);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    ASSERT_GE(lines.size(), 6u);
    lines[4] = "  this is not C++;";
    std::string broken;
    for (const std::string& l : lines) broken += l + "\n";
    WriteText(bad / "golden.cu", broken);
    // A problem file that does not parse (line 3).
    WriteText(problems_ / "typo.textproto",
              "name: \"typo\"\ntitle: \"t\"\ndims { name: \"R\" min: oops }\n");

    auto kbd = KbdProcess::Start({{"--problems-dir", problems_.string()},
                                  /*data_dir=*/""});
    ASSERT_TRUE(kbd.ok()) << kbd.status();
    kbd_ = std::move(*kbd);
    client_ =
        std::make_unique<KbenchClient>(kbd_->address(), absl::Seconds(60));
  }

  testing::TempDir dir_;
  fs::path problems_;
  std::unique_ptr<KbdProcess> kbd_;
  std::unique_ptr<KbenchClient> client_;
};

TEST_F(ProblemLibraryTest, TheNewProblemIsServedAndTheBrokenOnesAreRefused) {
  absl::StatusOr<v1::ListProblemsResponse> all =
      client_->ListProblems(v1::ListProblemsRequest());
  ASSERT_TRUE(all.ok()) << all.status();
  std::vector<std::string> names;
  for (const v1::Problem& p : all->problems()) names.push_back(p.name());
  EXPECT_EQ(names,
            (std::vector<std::string>{"gather_linear_bf16",
                                      "gather_linear_fp32", "row_mean_fp32"}));
  EXPECT_EQ(
      std::vector<std::string>(all->suites().begin(), all->suites().end()),
      (std::vector<std::string>{"collectives", "core"}));
  // The golden's source stays in kbd; its file name is shown.
  for (const v1::Problem& p : all->problems()) {
    EXPECT_TRUE(p.golden().source().empty()) << p.name();
    if (p.name() == "row_mean_fp32") {
      EXPECT_EQ(p.golden().file(), "golden.cu");
    }
  }
  ASSERT_EQ(all->refused_size(), 2);
  EXPECT_EQ(all->refused(0).file(), "bad_golden/problem.textproto");
  EXPECT_THAT(
      all->refused(0).error(),
      HasSubstr("bad_golden/problem.textproto: golden kernel "
                "'golden.cu' does not compile for sm_90: golden.cu:5:"));
  EXPECT_EQ(all->refused(1).file(), "typo.textproto");
  EXPECT_THAT(all->refused(1).error(), HasSubstr("typo.textproto:3:"));
  // Nothing of the server's paths reaches a client.
  EXPECT_THAT(all->DebugString(), Not(HasSubstr(dir_.path())));
  EXPECT_THAT(kbd_->Log(), HasSubstr("problem refused: typo.textproto:3:"));

  v1::ListProblemsRequest core;
  core.set_suite("core");
  absl::StatusOr<v1::ListProblemsResponse> one = client_->ListProblems(core);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ(one->problems_size(), 1);
  EXPECT_EQ(one->problems(0).name(), "row_mean_fp32");

  v1::ListProblemsRequest unknown;
  unknown.set_suite("nope");
  EXPECT_EQ(client_->ListProblems(unknown).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(client_->ListProblems(unknown).status().message()),
              HasSubstr("unknown suite 'nope'; known suites: collectives, "
                        "core"));
  v1::ListProblemsRequest bad;
  bad.set_suite(std::string("co\x01re"));
  EXPECT_EQ(client_->ListProblems(bad).status().code(),
            absl::StatusCode::kInvalidArgument);
  bad.set_suite(std::string(65, 'a'));
  EXPECT_EQ(client_->ListProblems(bad).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(ProblemLibraryTest, TheNewProblemsExampleCompiles) {
  v1::CompileKernelRequest request;
  request.mutable_kernel()->set_source(
      ReadText(problems_ / "row_mean_fp32" / "example.cu"));
  request.mutable_kernel()->set_filename("example.cu");
  absl::StatusOr<v1::CompileKernelResponse> r = client_->CompileKernel(request);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->compile().success()) << r->compile().log();
  ASSERT_EQ(r->compile().plan().launches_size(), 1);
  EXPECT_EQ(r->compile().plan().launches(0).entry(), "row_mean_naive");
  EXPECT_EQ(r->compile().plan().problem(), "row_mean_fp32");
}

TEST_F(ProblemLibraryTest, KbctlAndHttpListBySuite) {
  const CommandResult r =
      RunCommand({BinDir() + "/kbctl", "--server", kbd_->address(), "problems",
                  "--suite", "core"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("row_mean_fp32: Row means (fp32)\nsuites: core"));
  EXPECT_THAT(r.out, Not(HasSubstr("gather_linear_fp32:")));
  EXPECT_THAT(r.out, HasSubstr("suites: collectives, core\n"));
  EXPECT_THAT(r.out, HasSubstr("refused at kbd start: typo.textproto:3:"));
  const CommandResult missing =
      RunCommand({BinDir() + "/kbctl", "--server", kbd_->address(), "problems",
                  "--suite", "nope"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_THAT(missing.err, HasSubstr("unknown suite 'nope'"));

  httplib::Client http("http://" + kbd_->http_address());
  auto listed = http.Get("/api/problems?suite=collectives");
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->status, 200) << listed->body;
  const nlohmann::json j = nlohmann::json::parse(listed->body);
  ASSERT_EQ(j["problems"].size(), 2u);
  EXPECT_EQ(j["problems"][0]["name"], "gather_linear_bf16");
  auto unknown = http.Get("/api/problems?suite=nope");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404) << unknown->body;
}

// kbd's default: golden-kernel problems run. With a worker (the stand-in
// runner, which checks, as kbrunner does, that a golden problem's job
// carries the golden's cubin and plan), run_correctness of the new
// problem's example is leased, run and passed, not refused.
TEST(ProblemLibraryDefaultTest, GoldenProblemsRunByDefault) {
  testing::TempDir dir;
  const fs::path problems = fs::path(dir.path()) / "problems";
  fs::create_directories(problems);
  fs::copy(kSource / "tests/integration/problems/row_mean_fp32",
           problems / "row_mean_fp32");
  auto kbd = KbdProcess::Start({{"--problems-dir", problems.string()}, ""});
  ASSERT_TRUE(kbd.ok()) << kbd.status();
  auto worker =
      testing::StartWorker((*kbd)->address(), BinDir() + "/kb_fake_runner");
  ASSERT_TRUE(worker.ok()) << worker.status();
  KbenchClient client((*kbd)->address(), absl::Seconds(60));
  // The worker registers its (fake) GPU first.
  for (int i = 0; i < 400; ++i) {
    absl::StatusOr<v1::GetGpuSpecsResponse> specs =
        client.GetGpuSpecs(v1::GetGpuSpecsRequest());
    if (specs.ok() && specs->gpus_size() > 0) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  v1::RunCorrectnessRequest check;
  check.mutable_kernel()->set_source(
      ReadText(problems / "row_mean_fp32" / "example.cu"));
  check.mutable_kernel()->set_filename("example.cu");
  absl::StatusOr<v1::RunCorrectnessResponse> checked =
      client.RunCorrectness(check);
  ASSERT_TRUE(checked.ok()) << checked.status() << "\n" << (*kbd)->Log();
  EXPECT_EQ(checked->result().verdict(), v1::VERDICT_PASSED)
      << checked->result().message();
}

}  // namespace
}  // namespace kbench
