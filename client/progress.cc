#include "client/progress.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "contract/names.h"

namespace kbench {

ProgressReporter::ProgressReporter(std::ostream& err, bool tty)
    : err_(err), tty_(tty), start_(absl::Now()) {
  if (tty_) ticker_ = std::thread([this] { TickerLoop(); });
}

ProgressReporter::~ProgressReporter() { Finish(); }

void ProgressReporter::Update(const v1::Job& job) {
  absl::MutexLock lock(&mu_);
  if (finished_) return;
  const bool stage_changed = !have_job_ || job.stage() != job_.stage();
  job_ = job;
  have_job_ = true;
  if (tty_) {
    if (job.stage() == v1::STAGE_DONE) {
      ClearLine();
    } else {
      Redraw();
    }
  } else if (stage_changed) {
    err_ << Line() << "\n" << std::flush;
  }
}

void ProgressReporter::Note(absl::string_view message) {
  absl::MutexLock lock(&mu_);
  ClearLine();
  err_ << message << "\n" << std::flush;
  if (tty_ && !finished_ && have_job_ && job_.stage() != v1::STAGE_DONE) {
    Redraw();
  }
}

void ProgressReporter::Finish() {
  {
    absl::MutexLock lock(&mu_);
    if (finished_) return;
    finished_ = true;
    ClearLine();
  }
  if (ticker_.joinable()) ticker_.join();
}

std::string ProgressReporter::Line() const {
  const double elapsed_s = absl::ToDoubleSeconds(absl::Now() - start_);
  std::string line =
      absl::StrCat("kbctl: job ", job_.id(), " ", StageName(job_.stage()));
  if (job_.stage() == v1::STAGE_DONE) {
    absl::StrAppend(&line, " (", VerdictName(job_.result().verdict()), ")");
  } else if (!job_.stage_detail().empty()) {
    absl::StrAppend(&line, ": ", job_.stage_detail());
  }
  if (job_.queue_position() > 0 && job_.stage() != v1::STAGE_DONE) {
    absl::StrAppend(&line, " (queue position ", job_.queue_position(), ")");
  }
  absl::StrAppend(&line, " [", static_cast<int64_t>(std::floor(elapsed_s)),
                  " s]");
  return line;
}

void ProgressReporter::Redraw() {
  // "\033[K" erases what a longer previous line left to the right.
  err_ << "\r" << Line() << "\033[K" << std::flush;
  line_shown_ = true;
}

void ProgressReporter::ClearLine() {
  if (!line_shown_) return;
  err_ << "\r\033[K" << std::flush;
  line_shown_ = false;
}

void ProgressReporter::TickerLoop() {
  absl::MutexLock lock(&mu_);
  while (!finished_) {
    mu_.AwaitWithTimeout(absl::Condition(&finished_), absl::Seconds(1));
    if (!finished_ && have_job_ && job_.stage() != v1::STAGE_DONE) Redraw();
  }
}

}  // namespace kbench
