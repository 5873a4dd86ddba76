// LineLoadsChild without a GPU: a stand-in kbrunner (a shell script) plays
// the line-loads child, so the spare's start, its cue ("go N"), the report
// read before the child's exit, the reaping in WaitQuiet, and the failure
// paths (a child that fails, one that never gets ready) run in CI.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "runner/profile/line_loads.h"
#include "testing/process.h"

namespace kbench {
namespace {

// The stand-in: its last argument is the folder. KB_FAKE_MODE picks what it
// does; it notes its start, its cue, how many had started by 0.3 s after
// its cue, and its exit in KB_FAKE_MARKS.
constexpr char kScript[] = R"(#!/bin/sh
for a; do dir=$a; done
echo started >> "$KB_FAKE_MARKS/starts"
case "$KB_FAKE_MODE" in
  never-ready) sleep 30; exit 0 ;;
esac
touch "$dir/ready"
read cue || exit 0
echo "$cue" >> "$KB_FAKE_MARKS/cues"
sleep 0.3
wc -l < "$KB_FAKE_MARKS/starts" | tr -d ' ' > "$KB_FAKE_MARKS/starts-at-cue"
case "$KB_FAKE_MODE" in
  fail) exit 3 ;;
esac
: > "$dir/lines.tmp"
mv "$dir/lines.tmp" "$dir/lines.pb"
sleep 0.5
touch "$KB_FAKE_MARKS/exited"
exit 0
)";

class LineLoadsChildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    script_ = dir_.path() + "/fake-kbrunner";
    std::ofstream(script_) << kScript;
    chmod(script_.c_str(), 0755);
    setenv("KB_FAKE_MARKS", dir_.path().c_str(), 1);
    setenv("KB_FAKE_MODE", "ok", 1);
  }

  LineLoadsChild::Options Options() {
    LineLoadsChild::Options o;
    o.kbrunner = script_;
    o.ready_timeout = absl::Seconds(10);
    o.run_timeout = absl::Seconds(10);
    return o;
  }

  std::string Marks(const std::string& name) {
    std::ifstream in(dir_.path() + "/" + name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  bool Exists(const std::string& name) {
    return std::filesystem::exists(dir_.path() + "/" + name);
  }

  testing::TempDir dir_;
  std::string script_;
  v1::RunnerJob job_;
};

TEST_F(LineLoadsChildTest, ReturnsTheReportBeforeTheChildExitsThenReapsIt) {
  LineLoadsChild child(Options());
  auto r = child.Run(job_, "cubin", "sm_90", 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Marks("cues"), "go 2\n");
  EXPECT_FALSE(Exists("exited")) << "Run waited for the exit";
  child.WaitQuiet();
  EXPECT_TRUE(Exists("exited")) << "WaitQuiet did not reap the child";
}

TEST_F(LineLoadsChildTest, EachLaunchGetsAFreshChild) {
  LineLoadsChild child(Options());
  ASSERT_TRUE(child.Run(job_, "cubin", "sm_90", 0).ok());
  ASSERT_TRUE(child.Run(job_, "cubin", "sm_90", 1).ok());
  child.WaitQuiet();
  EXPECT_EQ(Marks("cues"), "go 0\ngo 1\n");
}

// The next spare's start-up overlaps this child's run, not the runner's
// next job.
TEST_F(LineLoadsChildTest, TheNextSpareStartsBeforeTheCue) {
  LineLoadsChild child(Options());
  ASSERT_TRUE(child.Run(job_, "cubin", "sm_90", 0).ok());
  child.WaitQuiet();
  EXPECT_EQ(Marks("starts-at-cue"), "2\n");
}

TEST_F(LineLoadsChildTest, AChildThatFailsIsReportedAndTheNextOneWorks) {
  setenv("KB_FAKE_MODE", "fail", 1);
  LineLoadsChild child(Options());
  auto r = child.Run(job_, "cubin", "sm_90", 0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("exit status 3"), std::string::npos)
      << r.status();
  // The spare started after the failure was made under "fail" too; a
  // fresh one after it runs under "ok".
  setenv("KB_FAKE_MODE", "ok", 1);
  (void)child.Run(job_, "cubin", "sm_90", 0);
  auto ok = child.Run(job_, "cubin", "sm_90", 0);
  EXPECT_TRUE(ok.ok()) << ok.status();
}

TEST_F(LineLoadsChildTest, AChildThatNeverGetsReadyIsKilledAndSaid) {
  setenv("KB_FAKE_MODE", "never-ready", 1);
  LineLoadsChild::Options o = Options();
  o.ready_timeout = absl::Milliseconds(300);
  LineLoadsChild child(o);
  auto r = child.Run(job_, "cubin", "sm_90", 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("did not start"), std::string::npos)
      << r.status();
  EXPECT_EQ(Marks("cues"), "");
}

}  // namespace
}  // namespace kbench
