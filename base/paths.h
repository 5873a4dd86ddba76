// Where things are on disk: the running executable's folder and the
// default data directory.
// Thread safety: stateless.
#ifndef KBENCH_BASE_PATHS_H_
#define KBENCH_BASE_PATHS_H_

#include <string>

namespace kbench {

// The running executable (from /proc/self/exe); "" if unknown.
std::string ExePath();

// Folder of the running executable (from /proc/self/exe); "." if unknown.
std::string ExeDir();

// kbd's default data directory: $KBENCH_DATA_DIR, else
// $XDG_STATE_HOME/kbench, else $HOME/.local/state/kbench, else
// ./.kbench.
std::string DefaultDataDir();

}  // namespace kbench

#endif  // KBENCH_BASE_PATHS_H_
