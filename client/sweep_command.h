// kbctl sweep --suite S DIR: submits, for every problem of suite S, the
// kernel file of DIR that names it (`// @kb problem NAME`), one after the
// other, and prints a table: verdict, speedup, fraction of the physical
// floor (speed of light) and wall time per problem, and the geometric mean
// of the speedups of those that passed.
//
// DIR is the user's, but still bounded: its first kMaxSweepFiles `.cu`
// files (by name) are read, each up to kMaxSweepFileBytes; a file over
// that is reported, not read.
//
// Thread safety: one call at a time per output stream.
#ifndef KBENCH_CLIENT_SWEEP_COMMAND_H_
#define KBENCH_CLIENT_SWEEP_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "client/commands.h"
#include "kbench/v1/kbench.pb.h"

namespace kbench {

inline constexpr int kMaxSweepFiles = 1000;
inline constexpr int64_t kMaxSweepFileBytes = int64_t{256} << 10;

// Flags of sweep.
struct SweepOptions {
  // The suite whose problems are submitted.
  std::string suite;
  // The folder of kernel files.
  std::string dir;
  // Session id the submits are recorded under; empty for none.
  std::string session;
};

// One problem of the sweep.
struct SweepRow {
  std::string problem;
  // The kernel file (its name in DIR); empty when none names the problem.
  std::string file;
  // Set when the submit ran: its job, as GetJob returns it when done.
  bool submitted = false;
  v1::Job job;
  // Why it did not run or finish (no kernel file, a refused submit).
  std::string error;
  double wall_s = 0;
};

// The table (Markdown) and the geometric mean line; `notes` (files skipped
// and why) follow it.
std::string FormatSweep(const std::string& suite,
                        const std::vector<SweepRow>& rows,
                        const std::vector<std::string>& notes);

// The command: 0 when every problem of the suite passed, 1 when one did
// not (no kernel file included), 2 on an error (unknown suite, kbd
// unreachable, DIR unreadable).
int RunSweep(const GlobalOptions& global, const SweepOptions& options,
             std::ostream& out, std::ostream& err);

}  // namespace kbench

#endif  // KBENCH_CLIENT_SWEEP_COMMAND_H_
