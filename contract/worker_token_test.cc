// Tests of the worker token (contract/worker_auth.h): generation, kbd's
// create-once file (mode 0600, atomic, concurrent creators agree), the
// refusal of token files others could read, change or swap (mode, owner,
// not a regular file, symlinked FIFO), bad contents, kbworker's sources
// (flag, then file from the environment, then the token itself) and the
// header check (missing, malformed, wrong, right).
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "contract/worker_auth.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/process.h"

namespace kbench {
namespace {

using ::kbench::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kToken[] = "0123456789abcdef0123456789abcdef";

void Write(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream(path) << text;
  ASSERT_EQ(chmod(path.c_str(), mode), 0);
}

mode_t Mode(const std::string& path) {
  struct stat st;
  EXPECT_EQ(stat(path.c_str(), &st), 0);
  return st.st_mode & 07777;
}

// Sets an environment variable for one test and restores it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(WorkerTokenTest, GeneratedTokensAreLongHexAndDistinct) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    absl::StatusOr<std::string> t = GenerateWorkerToken();
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->size(), 64u);
    EXPECT_EQ(t->find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_TRUE(ValidateWorkerToken(*t, "test").ok());
    seen.insert(*t);
  }
  EXPECT_EQ(seen.size(), 100u);
}

TEST(WorkerTokenTest, KbdCreatesTheFileOnceWithMode0600) {
  TempDir dir;
  const std::string path = dir.path() + "/worker.token";
  absl::StatusOr<std::string> first = LoadOrCreateWorkerTokenFile(path);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(Mode(path), 0600u);
  // The next start reads the same token.
  absl::StatusOr<std::string> again = LoadOrCreateWorkerTokenFile(path);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *first);
  EXPECT_EQ(*ReadWorkerTokenFile(path), *first);
  // No temporary file is left beside it.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

TEST(WorkerTokenTest, ConcurrentCreatorsAgreeOnOneToken) {
  TempDir dir;
  const std::string path = dir.path() + "/worker.token";
  std::vector<std::string> tokens(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      absl::StatusOr<std::string> t = LoadOrCreateWorkerTokenFile(path);
      tokens[i] = t.ok() ? *t : std::string(t.status().message());
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& t : tokens) EXPECT_EQ(t, tokens[0]);
  EXPECT_TRUE(ValidateWorkerToken(tokens[0], "test").ok()) << tokens[0];
}

TEST(WorkerTokenTest, FilesOthersCanReadOrChangeAreRefused) {
  TempDir dir;
  const std::string path = dir.path() + "/worker.token";
  for (mode_t mode : {0644, 0640, 0604, 0620, 0602, 0660}) {
    Write(path, kToken, mode);
    for (auto read : {&ReadWorkerTokenFile, &LoadOrCreateWorkerTokenFile}) {
      absl::StatusOr<std::string> t = read(path);
      ASSERT_FALSE(t.ok()) << std::oct << mode;
      EXPECT_EQ(t.status().code(), absl::StatusCode::kPermissionDenied);
      EXPECT_THAT(t.status().message(), HasSubstr(path));
      EXPECT_THAT(t.status().message(), HasSubstr("chmod 600"));
      // The refused file is left alone (kbd never replaces it silently).
      EXPECT_EQ(Mode(path), mode);
    }
  }
  Write(path, kToken, 0400);  // Read-only for the owner is fine.
  EXPECT_EQ(*ReadWorkerTokenFile(path), kToken);
}

TEST(WorkerTokenTest, FilesOwnedBySomeoneElseAreRefused) {
  if (geteuid() != 0) {
    // Only root can give a file away; as anyone else the check is still
    // exercised by a file root owns, if one is readable.
    const absl::StatusOr<std::string> t = ReadWorkerTokenFile("/etc/hostname");
    if (access("/etc/hostname", R_OK) != 0) GTEST_SKIP();
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), absl::StatusCode::kPermissionDenied);
    EXPECT_THAT(t.status().message(), HasSubstr("owned by uid 0"));
    return;
  }
  TempDir dir;
  const std::string path = dir.path() + "/worker.token";
  Write(path, kToken, 0600);
  ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0);
  absl::StatusOr<std::string> t = ReadWorkerTokenFile(path);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(t.status().message(), HasSubstr("owned by uid 65534"));
  EXPECT_THAT(t.status().message(), HasSubstr("chown"));
}

TEST(WorkerTokenTest, NotARegularFileIsRefusedWithoutHanging) {
  TempDir dir;
  EXPECT_EQ(ReadWorkerTokenFile(dir.path()).status().code(),
            absl::StatusCode::kPermissionDenied);
  const std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string link = dir.path() + "/worker.token";
  ASSERT_EQ(symlink(fifo.c_str(), link.c_str()), 0);
  absl::StatusOr<std::string> t = ReadWorkerTokenFile(link);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("not a regular file"));
  // kbd does not create a token over a planted link either.
  EXPECT_FALSE(LoadOrCreateWorkerTokenFile(link).ok());
}

TEST(WorkerTokenTest, MissingFileIsNotFoundAndSaysWhereTheTokenComesFrom) {
  absl::StatusOr<std::string> t = ReadWorkerTokenFile("/nonexistent/x.token");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(t.status().message(), HasSubstr("/nonexistent/x.token"));
  EXPECT_THAT(t.status().message(), HasSubstr("worker.token"));
}

TEST(WorkerTokenTest, BadContentsAreRefused) {
  TempDir dir;
  const std::string path = dir.path() + "/worker.token";
  for (const std::string& text :
       {std::string(""), std::string("short"), std::string(40, ' '),
        std::string("0123456789abcdef 0123456789abcdef"),
        std::string("0123456789abcdef0123456789abcdef\"quoted\""),
        std::string(600, 'a'), std::string(5000, 'a')}) {
    Write(path, text, 0600);
    absl::StatusOr<std::string> t = ReadWorkerTokenFile(path);
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument)
        << "'" << text.substr(0, 40) << "'";
  }
  // Surrounding whitespace (a trailing newline) is not part of the token.
  Write(path, absl::StrCat("  ", kToken, "\n\n"), 0600);
  EXPECT_EQ(*ReadWorkerTokenFile(path), kToken);
}

TEST(WorkerTokenTest, WorkerTakesTheFlagThenTheFileEnvThenTheTokenEnv) {
  TempDir dir;
  const std::string flag_file = dir.path() + "/flag.token";
  const std::string env_file = dir.path() + "/env.token";
  Write(flag_file, std::string(32, 'f'), 0600);
  Write(env_file, std::string(32, 'e'), 0600);
  {
    ScopedEnv f(kWorkerTokenFileEnv, env_file.c_str());
    ScopedEnv t(kWorkerTokenEnv, std::string(32, 't').c_str());
    EXPECT_EQ(*ResolveWorkerToken(flag_file), std::string(32, 'f'));
    EXPECT_EQ(*ResolveWorkerToken(""), std::string(32, 'e'));
  }
  {
    ScopedEnv f(kWorkerTokenFileEnv, nullptr);
    ScopedEnv t(kWorkerTokenEnv, std::string(32, 't').c_str());
    EXPECT_EQ(*ResolveWorkerToken(""), std::string(32, 't'));
  }
  {
    ScopedEnv f(kWorkerTokenFileEnv, nullptr);
    ScopedEnv t(kWorkerTokenEnv, "too short");
    EXPECT_EQ(ResolveWorkerToken("").status().code(),
              absl::StatusCode::kInvalidArgument);
  }
  {
    ScopedEnv f(kWorkerTokenFileEnv, nullptr);
    ScopedEnv t(kWorkerTokenEnv, nullptr);
    absl::StatusOr<std::string> none = ResolveWorkerToken("");
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(none.status().message(), HasSubstr("--token-file"));
    EXPECT_THAT(none.status().message(), HasSubstr(kWorkerTokenFileEnv));
    EXPECT_THAT(none.status().message(), HasSubstr(kWorkerTokenEnv));
  }
}

TEST(WorkerTokenTest, TokensEqualComparesWholeTokens) {
  EXPECT_TRUE(TokensEqual(kToken, kToken));
  std::string other = kToken;
  other.back() = 'x';
  EXPECT_FALSE(TokensEqual(kToken, other));
  EXPECT_FALSE(TokensEqual(kToken, std::string(kToken).substr(0, 31)));
  EXPECT_FALSE(TokensEqual(kToken, ""));
  EXPECT_FALSE(TokensEqual(kToken, absl::StrCat(kToken, "0")));
}

TEST(WorkerTokenTest, AuthenticatorChecksTheBearerToken) {
  const WorkerAuthenticator auth({kToken, "/var/lib/kbench/worker.token"});
  const absl::Status missing = auth.Check(std::nullopt);
  EXPECT_EQ(missing.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(missing.message(), HasSubstr("/var/lib/kbench/worker.token"));
  EXPECT_THAT(missing.message(), HasSubstr("--token-file"));
  EXPECT_EQ(auth.Check("").code(), absl::StatusCode::kUnauthenticated);
  for (const std::string& v :
       {std::string(kToken), std::string("Basic ") + kToken,
        std::string("Bearer"), std::string("Bearer ")}) {
    EXPECT_EQ(auth.Check(v).code(), absl::StatusCode::kUnauthenticated) << v;
  }
  const absl::Status wrong =
      auth.Check(absl::StrCat("Bearer ", std::string(32, 'z')));
  EXPECT_EQ(wrong.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(wrong.message(), HasSubstr("/var/lib/kbench/worker.token"));
  // A message never echoes a token, right or wrong.
  EXPECT_THAT(wrong.message(), Not(HasSubstr(kToken)));
  EXPECT_THAT(wrong.message(), Not(HasSubstr(std::string(32, 'z'))));
  EXPECT_EQ(auth.Check(absl::StrCat("Bearer ", kToken, "0")).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(auth.Check(absl::StrCat("Bearer ", kToken)).ok());
  EXPECT_TRUE(auth.Check(absl::StrCat("bearer ", kToken)).ok());
}

}  // namespace
}  // namespace kbench
