// RunKbctl: the whole kbctl command line (flag parsing and dispatch to the
// commands of client/commands.h), callable in-process so that tests can
// capture its output.
//
// Thread safety: reads the environment (KBENCH_SERVER, KBENCH_SESSION);
// otherwise independent per call.
#ifndef KBENCH_CLIENT_KBCTL_APP_H_
#define KBENCH_CLIENT_KBCTL_APP_H_

#include <ostream>

namespace kbench {

// Parses `argv` (argv[0] is the program name) and runs the command. The
// command's output goes to `out`; progress, help for errors and error
// messages to `err`. `--help` prints to `out`. Returns the exit code: 0
// passed / succeeded, 1 verdict not passed, 2 usage error, rejected input,
// unreachable or failed service.
int RunKbctl(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace kbench

#endif  // KBENCH_CLIENT_KBCTL_APP_H_
