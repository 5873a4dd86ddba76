// SpawnProcess: the environment on top of this one, the descriptor map,
// process groups, a clean signal state, and errors that name the program.
#include "base/process/spawn.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <string>
#include <thread>

#include "base/process/run_child.h"

namespace kbench {
namespace {

// Everything the child writes to `fd` (of the child) until it exits, and
// its exit code.
struct Output {
  std::string text;
  int exit_code = -1;
};
Output RunCapturing(SpawnOptions o, int child_fd) {
  int p[2];
  EXPECT_EQ(pipe2(p, O_CLOEXEC), 0);
  o.fds.push_back({child_fd, p[1]});
  absl::StatusOr<pid_t> pid = SpawnProcess(o);
  close(p[1]);
  Output out;
  if (!pid.ok()) {
    ADD_FAILURE() << pid.status();
    close(p[0]);
    return out;
  }
  char buf[4096];
  ssize_t n;
  while ((n = read(p[0], buf, sizeof(buf))) > 0) out.text.append(buf, n);
  close(p[0]);
  int status = 0;
  waitpid(*pid, &status, 0);
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  return out;
}

TEST(SpawnProcessTest, EnvironmentIsSetOrReplacedOnTopOfOurs) {
  setenv("KB_SPAWN_KEEP", "kept", 1);
  setenv("KB_SPAWN_REPLACE", "old", 1);
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c",
            "echo \"$KB_SPAWN_KEEP $KB_SPAWN_REPLACE $KB_SPAWN_NEW\"; "
            "env | grep -c '^KB_SPAWN_REPLACE='"};
  o.env = {{"KB_SPAWN_REPLACE", "new"}, {"KB_SPAWN_NEW", "added"}};
  const Output out = RunCapturing(o, 1);
  EXPECT_EQ(out.text, "kept new added\n1\n");
  EXPECT_EQ(out.exit_code, 0);
}

TEST(SpawnProcessTest, DescriptorsGoWhereTheMapSays) {
  // fd 3 of the child is our pipe; its stdin is /dev/null (read gives EOF
  // at once, so `cat` ends).
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "cat; echo on-three >&3"};
  o.fds = {{0, kDevNull}};
  const Output out = RunCapturing(o, 3);
  EXPECT_EQ(out.text, "on-three\n");
}

TEST(SpawnProcessTest, SwappedDescriptorsDoNotClobberEachOther) {
  // Child fd 1 <- our a, child fd 2 <- our b, where a and b were made to be
  // 2 and 1 here: a naive dup2 order would send both to one pipe.
  int a[2], b[2];
  ASSERT_EQ(pipe2(a, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(b, O_CLOEXEC), 0);
  const int saved_out = dup(1), saved_err = dup(2);
  ASSERT_GE(dup3(a[1], 2, O_CLOEXEC), 0);
  ASSERT_GE(dup3(b[1], 1, O_CLOEXEC), 0);
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "echo out; echo err >&2"};
  o.fds = {{1, 2}, {2, 1}};
  absl::StatusOr<pid_t> pid = SpawnProcess(o);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  close(saved_out);
  close(saved_err);
  close(a[1]);
  close(b[1]);
  ASSERT_TRUE(pid.ok()) << pid.status();
  waitpid(*pid, nullptr, 0);
  char buf[64] = {};
  ASSERT_GT(read(a[0], buf, sizeof(buf) - 1), 0);
  EXPECT_STREQ(buf, "out\n");
  char buf2[64] = {};
  ASSERT_GT(read(b[0], buf2, sizeof(buf2) - 1), 0);
  EXPECT_STREQ(buf2, "err\n");
  for (int fd : {a[0], b[0]}) close(fd);
}

TEST(SpawnProcessTest, ANewProcessGroupIsLedByTheChild) {
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "cut -d' ' -f5 /proc/$$/stat; echo $$"};
  o.new_process_group = true;
  const Output out = RunCapturing(o, 1);
  const size_t nl = out.text.find('\n');
  ASSERT_NE(nl, std::string::npos) << out.text;
  EXPECT_EQ(out.text.substr(0, nl) + "\n", out.text.substr(nl + 1));
  EXPECT_NE(out.text.substr(0, nl), std::to_string(getpgrp()));
}

TEST(SpawnProcessTest, IgnoredSignalsAndTheMaskAreNotInherited) {
  // The MCP tests ignore SIGPIPE; a child must not inherit that.
  signal(SIGPIPE, SIG_IGN);
  sigset_t block, saved;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &block, &saved);
  SpawnOptions o;
  o.argv = {"/bin/grep", "-E", "^Sig(Ign|Blk):", "/proc/self/status"};
  const Output out = RunCapturing(o, 1);
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  signal(SIGPIPE, SIG_DFL);
  // "SigBlk:\tHEX\nSigIgn:\tHEX\n": bit n-1 is signal n. glibc reserves
  // signals 32 and 33 for itself and refuses sigaction on them (under ASan
  // they arrive ignored), so only the standard signals 1..31 are compared.
  uint64_t blocked = ~uint64_t{0}, ignored = ~uint64_t{0};
  ASSERT_EQ(
      std::sscanf(out.text.c_str(), "SigBlk: %" SCNx64 " SigIgn: %" SCNx64,
                  &blocked, &ignored),
      2)
      << out.text;
  EXPECT_EQ(blocked, 0u) << out.text;
  EXPECT_EQ(ignored & uint64_t{0x7fffffff}, 0u) << out.text;
}

TEST(SpawnProcessTest, AMissingProgramIsFailedPreconditionWithItsName) {
  SpawnOptions o;
  o.argv = {"/nonexistent/kbworker", "--gpu", "0"};
  absl::StatusOr<pid_t> pid = SpawnProcess(o);
  ASSERT_TRUE(absl::IsFailedPrecondition(pid.status())) << pid.status();
  EXPECT_NE(pid.status().message().find("execve '/nonexistent/kbworker'"),
            std::string::npos)
      << pid.status();
  EXPECT_NE(pid.status().message().find("No such file or directory"),
            std::string::npos);
  // Reaped already: no child of ours is left.
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(SpawnProcessTest, BadRequestsAreInvalidArgument) {
  EXPECT_TRUE(absl::IsInvalidArgument(SpawnProcess({}).status()));
  SpawnOptions o;
  o.argv = {"/bin/true"};
  o.fds = {{-1, 0}};
  EXPECT_TRUE(absl::IsInvalidArgument(SpawnProcess(o).status()));
  o.fds = {{0, -7}};
  EXPECT_TRUE(absl::IsInvalidArgument(SpawnProcess(o).status()));
}

TEST(SpawnProcessTest, TheDeathSignalReachesTheChildWhenItsThreadEnds) {
  // A helper thread spawns `sleep`; when the thread ends, the child gets
  // the death signal (SIGTERM here) and dies of it.
  pid_t child = -1;
  std::thread([&child] {
    SpawnOptions o;
    o.argv = {"/bin/sleep", "30"};
    o.death_signal = SIGTERM;
    absl::StatusOr<pid_t> pid = SpawnProcess(o);
    ASSERT_TRUE(pid.ok()) << pid.status();
    child = *pid;
  }).join();
  ASSERT_GT(child, 0);
  auto r = WaitChild(child, absl::Seconds(10));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->signal, SIGTERM);
}

}  // namespace
}  // namespace kbench
