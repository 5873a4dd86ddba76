// LineLoads: global-load requests and sectors per source line of a job's
// candidate (SassLineCounters), collected in a child kbrunner with a CUDA
// context of its own. Measured on the H200: CUPTI's SASS metrics run once
// per process (sass_line_counters.h), and once they have run in a context,
// PC sampling there attributes no sample to user code; a process per
// collection keeps the runner's context as the counters and PC sampling
// need it.
//
// A child measures one kernel launch (sass_line_counters.h), so a plan of
// n kernels takes n children. One costs about 0.4 s, most of it start-up
// (libraries, CUDA context), so LineLoadsChild keeps a spare child started
// ahead of need:
// it starts, creates its context, says it is ready and waits, idle, for
// its cue on stdin. Its start-up must not overlap a measurement of the
// runner (another process's context creation is GPU work), so the runner
// calls WaitQuiet before timing.
//
// Thread safety: none (runner thread). Ownership: owns the spare child,
// which it kills in the destructor; the child also dies with the runner.
#ifndef KBENCH_RUNNER_PROFILE_LINE_LOADS_H_
#define KBENCH_RUNNER_PROFILE_LINE_LOADS_H_

#include <sys/types.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kbench/v1/report.pb.h"
#include "kbench/v1/worker.pb.h"
#include "runner/device/device_context.h"

namespace kbench {

// In the child: loads the job's cubin, binds its plan at the timing shape
// to fresh inputs, runs it once with SASS metrics on for its kernel launch
// `launch` (from 0) and fills out->hot_lines with one entry per source
// line of that kernel that loads from global memory (file, line,
// global_load_*).
absl::Status CollectLineLoads(DeviceContext* ctx, const v1::RunnerJob& job,
                              int launch, v1::ProfileReport* out);

// In the child (`kbrunner --line-loads-wait DIR`): creates DIR/ready, waits
// for a line "go N" on stdin, then reads DIR/job.pb and writes the loads of
// its launch N to DIR/lines.pb (a ProfileReport, with the reason in
// `missing` on failure). End of file on stdin: exits without work. Returns
// the exit status (0, or 1 on failure).
int ServeLineLoads(DeviceContext* ctx, const std::string& dir);

class LineLoadsChild {
 public:
  struct Options {
    // CUDA device ordinal the child uses.
    int device = 0;
    // Longest start-up (exec, libraries, CUDA context) before "ready".
    absl::Duration ready_timeout = absl::Seconds(20);
    // Longest run, from the cue to the child's exit.
    absl::Duration run_timeout = absl::Seconds(30);
    // The kbrunner binary; empty: this process's own (/proc/self/exe).
    std::string kbrunner;
  };

  explicit LineLoadsChild(const Options& options) : options_(options) {}
  ~LineLoadsChild();  // Kills and reaps the spare; removes its folder.
  LineLoadsChild(const LineLoadsChild&) = delete;
  LineLoadsChild& operator=(const LineLoadsChild&) = delete;

  // Returns once no child is starting up or exiting (the last one is
  // reaped; the spare is ready or there is none). A spare not ready within
  // ready_timeout is killed.
  void WaitQuiet();

  // Runs kernel launch `launch` of `job` (with `cubin` for `arch`) on the
  // spare, starting one first when there is none, and returns its report
  // as soon as it is written (WaitQuiet reaps the child). The next spare
  // starts just before the cue, so that its start-up overlaps this run
  // (counts of executed instructions, which another context does not
  // change) and the report of the job rather than the next job's
  // measurements. Unavailable with the child's reason when it fails.
  absl::StatusOr<v1::ProfileReport> Run(const v1::RunnerJob& job,
                                        const std::string& cubin,
                                        const std::string& arch, int launch);

 private:
  // A kbrunner started with --line-loads-wait.
  struct Child {
    pid_t pid = -1;      // -1: none.
    int cue_fd = -1;     // Write end of its stdin.
    std::string dir;     // Its folder (job.pb, lines.pb, ready).
    bool ready = false;  // DIR/ready was seen.
    absl::Time started;
  };
  // Starts the spare (there must be none).
  absl::Status Start();
  // Kills and reaps `c`, if running, and removes its folder.
  static void Discard(Child* c);
  // Cues `c` (ready, with DIR/job.pb written) for kernel launch `launch`
  // and waits for its report; the child, if still running, goes to
  // exiting_.
  absl::StatusOr<v1::ProfileReport> Cue(Child* c, int launch);

  Options options_;
  Child spare_;
  pid_t exiting_ = -1;  // A child that answered and is exiting, or -1.
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_PROFILE_LINE_LOADS_H_
