#include "compiler/sandbox/compile_jail.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/sanitizers.h"

#if KBENCH_SANITIZER_RUNTIME
#include <sanitizer/common_interface_defs.h>
#endif

namespace kbench {
namespace {

// Landlock's ABI, written out here: Debian 12's linux/landlock.h predates
// ABI 3, and the kernel accepts a smaller attribute size for older ABIs.
constexpr uint32_t kCreateRulesetVersion = 1U << 0;
constexpr int kRulePathBeneath = 1;

constexpr uint64_t kFsReadFile = 1ULL << 2;
constexpr uint64_t kFsReadDir = 1ULL << 3;
constexpr uint64_t kFsAbi1 = (1ULL << 13) - 1;  // EXECUTE .. MAKE_SYM.
constexpr uint64_t kFsRefer = 1ULL << 13;       // ABI 2.
constexpr uint64_t kFsTruncate = 1ULL << 14;    // ABI 3.
constexpr uint64_t kFsIoctlDev = 1ULL << 15;    // ABI 5.
constexpr uint64_t kNetBindTcp = 1ULL << 0;     // ABI 4.
constexpr uint64_t kNetConnectTcp = 1ULL << 1;  // ABI 4.
constexpr uint64_t kScopeAbstractUnixSocket = 1ULL << 0;  // ABI 6.
constexpr uint64_t kScopeSignal = 1ULL << 1;              // ABI 6.

struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

int64_t CreateRuleset(const RulesetAttr* attr, size_t size, uint32_t flags) {
  return syscall(__NR_landlock_create_ruleset, attr, size, flags);
}

// Syscalls a compiler never needs and an attacker would: they fail with
// EPERM (not a kill, so NVRTC's error paths still report).
constexpr int kDenied[] = {
    __NR_socket,
    __NR_socketpair,
    __NR_connect,
    __NR_bind,
    __NR_listen,
    __NR_accept,
    __NR_accept4,
    __NR_execve,
    __NR_execveat,
    __NR_ptrace,
    __NR_process_vm_readv,
    __NR_process_vm_writev,
    __NR_mount,
    __NR_umount2,
    __NR_pivot_root,
    __NR_chroot,
    __NR_unshare,
    __NR_setns,
    __NR_keyctl,
    __NR_add_key,
    __NR_request_key,
    __NR_bpf,
    __NR_perf_event_open,
    __NR_userfaultfd,
    __NR_io_uring_setup,
    __NR_io_uring_enter,
    __NR_io_uring_register,
    __NR_init_module,
    __NR_finit_module,
    __NR_delete_module,
    __NR_kexec_load,
    __NR_open_by_handle_at,
    __NR_name_to_handle_at,
    __NR_pidfd_open,
    __NR_pidfd_getfd,
    __NR_fanotify_init,
    __NR_mount_setattr,
    __NR_fsopen,
    __NR_fsmount,
    __NR_open_tree,
    __NR_move_mount,
};

#if defined(__x86_64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
#error "CompileJail knows the seccomp arch of x86-64 and aarch64 only"
#endif

absl::Status InstallSeccomp() {
  std::vector<sock_filter> f;
  // Another ABI (e.g. x32 or i386 entry points) is refused outright.
  f.push_back(
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
  f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0));
  f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  f.push_back(
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
#if defined(__x86_64__)
  // x32 syscalls carry bit 30 on the x86-64 arch.
  f.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1));
  f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM));
#endif
  for (int nr : kDenied) {
    f.push_back(
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 1));
    f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM));
  }
  f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  sock_fprog prog;
  prog.len = static_cast<uint16_t>(f.size());
  prog.filter = f.data();
  if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC,
              &prog) != 0) {
    return absl::InternalError(
        absl::StrCat("seccomp(SET_MODE_FILTER) failed: ", strerror(errno)));
  }
  return absl::OkStatus();
}

// Threads of this process, from /proc/self/task (0 when it is unreadable).
int ThreadCount() {
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return 0;
  int n = 0;
  while (struct dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

}  // namespace

std::string CompileJailReport::Describe() const {
  std::string out = absl::StrCat("landlock ABI ", landlock_abi);
  if (network_rules) out += ", no TCP";
  if (scoped) out += ", scoped";
  if (seccomp) out += ", seccomp";
  return out;
}

int LandlockAbi() {
  const int64_t abi = CreateRuleset(nullptr, 0, kCreateRulesetVersion);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

absl::StatusOr<CompileJailReport> EnterCompileJail(
    const std::vector<std::string>& readable_dirs) {
  // landlock_restrict_self and no_new_privs bind the calling thread only: a
  // thread started earlier would stay outside the jail.
  // (0: /proc unreadable, as inside a jail already, where nesting only
  // narrows.)
#if KBENCH_SANITIZER_RUNTIME
  // The sanitizer's own helper thread (TSan's background thread, restarted
  // in every forked child) is not ours: the runtime stops it on this
  // notice, which exists for sandboxes like this one.
  __sanitizer_sandbox_on_notify(nullptr);
#endif
  if (const int threads = ThreadCount(); threads > 1) {
    return absl::InternalError(absl::StrCat(
        "the compile jail must be entered by a single-threaded process; "
        "this one has ",
        threads, " threads"));
  }
  CompileJailReport report;
  report.landlock_abi = LandlockAbi();
  if (report.landlock_abi < 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Landlock is not available on this kernel (",
        errno == ENOSYS ? "not built in"
                        : "disabled at boot or by the LSM "
                          "list",
        "), so the compiler cannot be kept from reading host files"));
  }
  RulesetAttr attr = {};
  attr.handled_access_fs = kFsAbi1;
  size_t size = sizeof(uint64_t);
  if (report.landlock_abi >= 2) attr.handled_access_fs |= kFsRefer;
  if (report.landlock_abi >= 3) attr.handled_access_fs |= kFsTruncate;
  if (report.landlock_abi >= 4) {
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
    size = 2 * sizeof(uint64_t);
    report.network_rules = true;
  }
  if (report.landlock_abi >= 5) attr.handled_access_fs |= kFsIoctlDev;
  if (report.landlock_abi >= 6) {
    attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
    size = sizeof(RulesetAttr);
    report.scoped = true;
  }
  const int ruleset = static_cast<int>(CreateRuleset(&attr, size, 0));
  if (ruleset < 0) {
    return absl::InternalError(
        absl::StrCat("landlock_create_ruleset failed: ", strerror(errno)));
  }
  for (const std::string& dir : readable_dirs) {
    const int fd = open(dir.c_str(), O_PATH | O_CLOEXEC | O_DIRECTORY);
    if (fd < 0) continue;  // A missing optional dir (e.g. no cccl/).
    PathBeneathAttr rule = {kFsReadFile | kFsReadDir, fd};
    const int64_t added =
        syscall(__NR_landlock_add_rule, ruleset, kRulePathBeneath, &rule, 0);
    const int err = errno;
    close(fd);
    if (added != 0) {
      close(ruleset);
      return absl::InternalError(
          absl::StrCat("landlock_add_rule(", dir, ") failed: ", strerror(err)));
    }
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    close(ruleset);
    return absl::InternalError(
        absl::StrCat("prctl(PR_SET_NO_NEW_PRIVS) failed: ", strerror(errno)));
  }
  if (syscall(__NR_landlock_restrict_self, ruleset, 0) != 0) {
    const int err = errno;
    close(ruleset);
    return absl::InternalError(
        absl::StrCat("landlock_restrict_self failed: ", strerror(err)));
  }
  close(ruleset);
  absl::Status seccomp = InstallSeccomp();
  if (!seccomp.ok()) return seccomp;
  report.seccomp = true;
  return report;
}

}  // namespace kbench
