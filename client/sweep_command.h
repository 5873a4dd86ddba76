// kbctl sweep --suite S DIR: submits, for every problem of suite S, the
// kernel file of DIR that names it (`// @kb problem NAME`), and prints a
// table: verdict, speedup, fraction of the physical floor (speed of
// light), runner time and wall time per problem, and the geometric mean of
// the speedups of those that passed.
//
// By default the kernels go to kbd as one sweep (SubmitSweep), so they run
// on every free worker at once and their wall times include waiting for
// each other; with --serial each is submitted when the previous one has
// finished, so each wall time is one submit's latency as a user sees it.
//
// DIR is the user's, but still bounded: its first kMaxSweepFiles `.cu`
// files (by name) are read, each up to kMaxSweepFileBytes; a file over
// that, or whose name kbd would refuse, is reported, not read.
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
  // Submit one kernel at a time instead of as one sweep.
  bool serial = false;
};

// The table (Markdown) and the geometric mean line; each row's error and
// then `notes` (files skipped and why) follow it.
std::string FormatSweep(const v1::Sweep& sweep,
                        const std::vector<std::string>& notes);

// The command: 0 when every problem of the suite passed, 1 when one did
// not (no kernel file included), 2 on an error: an unknown suite, kbd
// unreachable, DIR unreadable, every kernel refused (with the first
// refusal), or the timeout passed before every job was done (after the
// table, which shows where each stands).
int RunSweep(const GlobalOptions& global, const SweepOptions& options,
             std::ostream& out, std::ostream& err);

}  // namespace kbench

#endif  // KBENCH_CLIENT_SWEEP_COMMAND_H_
