// ProgressReporter (client/progress.h): kbctl's progress lines on stderr,
// one line per stage to a file or pipe, a redrawn line on a terminal.
#include "client/progress.h"

#include <algorithm>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(ProgressReporterTest, OneLinePerStageWhenNotATerminal) {
  std::ostringstream err;
  ProgressReporter progress(err, /*tty=*/false);
  v1::Job job;
  job.set_id("j1");
  job.set_stage(v1::STAGE_WAITING_GPU);
  job.set_queue_position(2);
  progress.Update(job);
  progress.Update(job);  // Same stage: no new line.
  job.set_stage(v1::STAGE_DONE);
  job.set_queue_position(0);
  job.mutable_result()->set_verdict(v1::VERDICT_CRASHED);
  progress.Update(job);
  progress.Finish();
  const std::string text = err.str();
  EXPECT_THAT(text,
              StartsWith("kbctl: job j1 waiting_gpu (queue position 2) ["));
  EXPECT_THAT(text, HasSubstr("\nkbctl: job j1 done (crashed) ["));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  EXPECT_EQ(text.find('\r'), std::string::npos);
}

TEST(ProgressReporterTest, TerminalLineIsRedrawnAndCleared) {
  std::ostringstream err;
  {
    ProgressReporter progress(err, /*tty=*/true);
    v1::Job job;
    job.set_id("j2");
    job.set_stage(v1::STAGE_RUNNING);
    job.set_stage_detail("trial 3/5 on odd/b7");
    progress.Update(job);
    progress.Note("kbctl: a note");
  }
  const std::string text = err.str();
  EXPECT_THAT(text,
              StartsWith("\rkbctl: job j2 running: trial 3/5 on odd/b7 ["));
  EXPECT_THAT(text, HasSubstr("\r\033[Kkbctl: a note\n"));
  EXPECT_THAT(text, ::testing::EndsWith("\r\033[K"));  // Cleared at the end.
  EXPECT_EQ(text.find("done"), std::string::npos);
}

}  // namespace
}  // namespace kbench
