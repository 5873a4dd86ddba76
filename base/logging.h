// Logging set-up shared by every binary: spdlog to stderr only, so stdout
// stays the command's output (and, for `kbctl mcp`, the protocol's).
// Thread safety: call InitLogging once, early in main.
#ifndef KBENCH_BASE_LOGGING_H_
#define KBENCH_BASE_LOGGING_H_

#include <string>

namespace kbench {

// `level`: trace, debug, info, warn, error, critical or off.
void InitLogging(const std::string& program, const std::string& level);

}  // namespace kbench

#endif  // KBENCH_BASE_LOGGING_H_
