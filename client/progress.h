// ProgressReporter: shows a job's progress on stderr while kbctl waits for
// it. On a terminal it keeps one line updated in place ('\r') with the
// stage, its detail, the queue position and the elapsed seconds, refreshed
// every second; otherwise it writes one line per stage change.
//
// Ownership: borrows the stream, which must outlive the reporter.
// Thread safety: all methods may be called from any thread; the terminal
// mode runs one internal ticker thread, stopped by Finish() or the
// destructor.
#ifndef KBENCH_CLIENT_PROGRESS_H_
#define KBENCH_CLIENT_PROGRESS_H_

#include <ostream>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kbench/v1/kbench.pb.h"

namespace kbench {

class ProgressReporter {
 public:
  // `tty`: the stream is a terminal (live line) or not (one line per
  // stage change).
  ProgressReporter(std::ostream& err, bool tty);
  ~ProgressReporter();

  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  // Records the job's latest state and shows it.
  void Update(const v1::Job& job);

  // Writes `message` on a line of its own (clearing the live line first).
  void Note(absl::string_view message);

  // Clears the live line and stops the ticker; later calls are no-ops.
  void Finish();

 private:
  // The progress text for the current job, e.g.
  // "kbctl: job j1 running: trial 3/5 on odd/b7 [4 s]".
  std::string Line() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Redraws the live line (terminal mode).
  void Redraw() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ClearLine() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void TickerLoop();

  std::ostream& err_;
  const bool tty_;
  const absl::Time start_;
  std::thread ticker_;

  mutable absl::Mutex mu_;
  v1::Job job_ ABSL_GUARDED_BY(mu_);
  bool have_job_ ABSL_GUARDED_BY(mu_) = false;
  bool line_shown_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace kbench

#endif  // KBENCH_CLIENT_PROGRESS_H_
