#include "base/paths.h"

#include <cstdlib>
#include <filesystem>

namespace kbench {

std::string ExePath() {
  std::error_code ec;
  const std::filesystem::path exe =
      std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "" : exe.string();
}

std::string ExeDir() {
  const std::string exe = ExePath();
  return exe.empty() ? "." : std::filesystem::path(exe).parent_path().string();
}

std::string DefaultDataDir() {
  if (const char* d = std::getenv("KBENCH_DATA_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_STATE_HOME"); x && *x) {
    return std::string(x) + "/kbench";
  }
  if (const char* h = std::getenv("HOME"); h && *h) {
    return std::string(h) + "/.local/state/kbench";
  }
  return ".kbench";
}

}  // namespace kbench
