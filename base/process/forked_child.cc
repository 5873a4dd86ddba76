#include "base/process/forked_child.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstring>

namespace kbench {

bool PrepareForkedChild(pid_t parent) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return false;
  if (getppid() != parent) _exit(126);  // The parent died already.
  sigset_t empty;
  sigemptyset(&empty);
  sigprocmask(SIG_SETMASK, &empty, nullptr);
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);
  return true;
}

}  // namespace kbench
