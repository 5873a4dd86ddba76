#include "contract/worker_auth.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace kbench {
namespace {

constexpr size_t kTokenBytes = 32;
constexpr size_t kMinTokenChars = 32;
constexpr size_t kMaxTokenChars = 512;
// A token file larger than this is not a token file.
constexpr size_t kMaxTokenFileBytes = 4096;

std::string ErrnoText(int err) { return std::strerror(err); }

// Fills `out` with `n` bytes from the kernel's CSPRNG.
absl::Status RandomBytes(unsigned char* out, size_t n) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = getrandom(out + got, n - got, 0);
    if (r > 0) {
      got += static_cast<size_t>(r);
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    break;  // ENOSYS (old kernel) or another failure: try /dev/urandom.
  }
  if (got == n) return absl::OkStatus();
  const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat(
        "no random source for the worker token: getrandom failed and "
        "/dev/urandom cannot be opened (",
        ErrnoText(errno), ")"));
  }
  while (got < n) {
    const ssize_t r = read(fd, out + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  close(fd);
  if (got != n) {
    return absl::InternalError(
        "reading /dev/urandom for the worker token "
        "failed");
  }
  return absl::OkStatus();
}

// Writes all of `data` to `fd`.
bool WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    const ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

absl::StatusOr<std::string> GenerateWorkerToken() {
  unsigned char bytes[kTokenBytes];
  if (absl::Status s = RandomBytes(bytes, sizeof(bytes)); !s.ok()) return s;
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes), sizeof(bytes)));
}

absl::Status ValidateWorkerToken(absl::string_view token,
                                 absl::string_view where) {
  if (token.size() < kMinTokenChars || token.size() > kMaxTokenChars) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the worker token in ", where, " is ", token.size(),
        " characters; a token has ", kMinTokenChars, " to ", kMaxTokenChars,
        " (kbd generates 64 hex digits into DATA_DIR/", kWorkerTokenFileName,
        "; copy that file)"));
  }
  for (char c : token) {
    const bool ok = absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
                    c == '.' || c == '_' || c == '~' || c == '+' || c == '/' ||
                    c == '=' || c == '-';
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the worker token in ", where,
          " has a character outside [A-Za-z0-9._~+/=-] (spaces, quotes and "
          "control characters are not allowed); copy kbd's DATA_DIR/",
          kWorkerTokenFileName, " as it is"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadWorkerTokenFile(const std::string& path) {
  // O_NONBLOCK: a FIFO planted at the path must not hang the open.
  const int fd =
      open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      return absl::NotFoundError(absl::StrCat(
          "worker token file ", path, " does not exist; kbd creates DATA_DIR/",
          kWorkerTokenFileName,
          " on its first start: copy that file here (mode 0600)"));
    }
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot open worker token file ", path, ": ", ErrnoText(err),
        "; it must be readable by the user this process runs as (uid ",
        geteuid(), ")"));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot stat worker token file ", path, ": ", ErrnoText(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return absl::PermissionDeniedError(absl::StrCat(
        "worker token file ", path,
        " is not a regular file; point the option at the token file itself"));
  }
  if (st.st_uid != geteuid()) {
    close(fd);
    return absl::PermissionDeniedError(absl::StrFormat(
        "worker token file %s is owned by uid %d, not by uid %d that runs "
        "this process; a token file someone else owns could have been "
        "swapped. Run `chown %d %s` (or remove it so that kbd creates a new "
        "one)",
        path, st.st_uid, geteuid(), geteuid(), path));
  }
  if ((st.st_mode & 077) != 0) {
    close(fd);
    return absl::PermissionDeniedError(absl::StrFormat(
        "worker token file %s has mode %04o: group or others may read or "
        "change it, and whoever reads it can lease jobs and forge their "
        "results. Run `chmod 600 %s`",
        path, st.st_mode & 07777, path));
  }
  std::string text;
  char buf[1024];
  while (text.size() <= kMaxTokenFileBytes) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return absl::PermissionDeniedError(absl::StrCat(
          "reading worker token file ", path, ": ", ErrnoText(err)));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  if (text.size() > kMaxTokenFileBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker token file ", path, " is larger than ", kMaxTokenFileBytes,
        " bytes; it must hold only the token"));
  }
  const absl::string_view token = absl::StripAsciiWhitespace(text);
  if (absl::Status s = ValidateWorkerToken(token, path); !s.ok()) return s;
  return std::string(token);
}

absl::StatusOr<std::string> LoadOrCreateWorkerTokenFile(
    const std::string& path) {
  absl::StatusOr<std::string> existing = ReadWorkerTokenFile(path);
  if (existing.ok() || !absl::IsNotFound(existing.status())) return existing;
  absl::StatusOr<std::string> token = GenerateWorkerToken();
  if (!token.ok()) return token.status();
  unsigned char salt[8];
  if (absl::Status s = RandomBytes(salt, sizeof(salt)); !s.ok()) return s;
  const std::string tmp =
      absl::StrCat(path, ".tmp-", getpid(), "-",
                   absl::BytesToHexString(absl::string_view(
                       reinterpret_cast<const char*>(salt), 8)));
  const int fd = open(
      tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot create the worker token file beside ", path, ": ",
        ErrnoText(errno),
        "; make its directory writable by kbd, or pass --worker-token-file "
        "with an existing token file"));
  }
  const bool written = fchmod(fd, 0600) == 0 &&
                       WriteAll(fd, absl::StrCat(*token, "\n")) &&
                       fsync(fd) == 0;
  const int write_err = errno;
  close(fd);
  if (!written) {
    unlink(tmp.c_str());
    return absl::InternalError(absl::StrCat("writing the worker token file ",
                                            tmp, ": ", ErrnoText(write_err)));
  }
  // link() publishes the complete file or fails with EEXIST when another
  // process was first; then that process's token is the one.
  const int linked = link(tmp.c_str(), path.c_str());
  const int link_err = errno;
  unlink(tmp.c_str());
  if (linked != 0 && link_err != EEXIST) {
    return absl::InternalError(absl::StrCat(
        "creating the worker token file ", path, ": ", ErrnoText(link_err),
        " (the data directory's file system must support hard links; or "
        "pass --worker-token-file with an existing token file)"));
  }
  return ReadWorkerTokenFile(path);
}

absl::StatusOr<std::string> ResolveWorkerToken(const std::string& flag_path) {
  if (!flag_path.empty()) return ReadWorkerTokenFile(flag_path);
  if (const char* f = std::getenv(kWorkerTokenFileEnv); f != nullptr && *f) {
    return ReadWorkerTokenFile(f);
  }
  if (const char* t = std::getenv(kWorkerTokenEnv); t != nullptr && *t) {
    const absl::string_view token = absl::StripAsciiWhitespace(t);
    if (absl::Status s =
            ValidateWorkerToken(token, absl::StrCat("$", kWorkerTokenEnv));
        !s.ok()) {
      return s;
    }
    return std::string(token);
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "no worker token: kbd accepts only workers that present the token it "
      "keeps in DATA_DIR/",
      kWorkerTokenFileName,
      " (/var/lib/kbench/worker.token under systemd). Pass --token-file "
      "PATH, or set $",
      kWorkerTokenFileEnv, " to the file's path, or $", kWorkerTokenEnv,
      " to the token"));
}

bool TokensEqual(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  volatile unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = diff | static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

absl::Status WorkerAuthenticator::Check(
    std::optional<absl::string_view> authorization) const {
  const std::string where =
      absl::StrCat("the token kbd keeps in ", options_.token_file,
                   "; give kbworker that file with --token-file (or $",
                   kWorkerTokenFileEnv, "), and it sends `", kAuthorizationKey,
                   ": ", kBearerPrefix, "<token>` metadata");
  if (!authorization.has_value() || authorization->empty()) {
    return absl::UnauthenticatedError(absl::StrCat(
        "kbench.v1.WorkerService is for kbench workers only and this call "
        "carries no worker token: send ",
        where));
  }
  const absl::string_view value = *authorization;
  const size_t prefix = std::strlen(kBearerPrefix);
  if (value.size() <= prefix ||
      !absl::EqualsIgnoreCase(value.substr(0, prefix), kBearerPrefix)) {
    return absl::UnauthenticatedError(absl::StrCat(
        "the `", kAuthorizationKey,
        "` metadata is not of the form `Bearer <token>`: send ", where));
  }
  if (!TokensEqual(absl::StripAsciiWhitespace(value.substr(prefix)),
                   options_.token)) {
    return absl::PermissionDeniedError(absl::StrCat(
        "the worker token is wrong: it is not ", where,
        ". A remote worker needs a copy of that file (mode 0600)"));
  }
  return absl::OkStatus();
}

}  // namespace kbench
