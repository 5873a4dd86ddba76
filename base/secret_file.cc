#include "base/secret_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace kbench {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

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
        "no random source: getrandom failed and /dev/urandom cannot be "
        "opened (",
        ErrnoText(errno), ")"));
  }
  while (got < n) {
    const ssize_t r = read(fd, out + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  close(fd);
  if (got != n) return absl::InternalError("reading /dev/urandom failed");
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadSecretFile(const std::string& path,
                                           const SecretFileText& text,
                                           size_t max_bytes) {
  // O_NONBLOCK: a FIFO planted at the path must not hang the open.
  const int fd =
      open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      return absl::NotFoundError(absl::StrCat(
          text.what, " ", path, " does not exist; ", text.when_missing));
    }
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot open ", text.what, " ", path, ": ", ErrnoText(err),
        "; it must be readable by the user this process runs as (uid ",
        geteuid(), ")"));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot stat ", text.what, " ", path, ": ", ErrnoText(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return absl::PermissionDeniedError(absl::StrCat(
        text.what, " ", path,
        " is not a regular file; point the option at the file itself"));
  }
  if (st.st_uid != geteuid()) {
    close(fd);
    return absl::PermissionDeniedError(absl::StrFormat(
        "%s %s is owned by uid %d, not by uid %d that runs this process; a "
        "secret file someone else owns could have been swapped. Run `chown "
        "%d %s` (or remove it so that kbd creates a new one)",
        text.what, path, st.st_uid, geteuid(), geteuid(), path));
  }
  if ((st.st_mode & 077) != 0) {
    close(fd);
    return absl::PermissionDeniedError(absl::StrFormat(
        "%s %s has mode %04o: group or others may read or change it, and "
        "whoever reads it can %s. Run `chmod 600 %s`",
        text.what, path, st.st_mode & 07777, text.risk, path));
  }
  std::string contents;
  char buf[1024];
  while (contents.size() <= max_bytes) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return absl::PermissionDeniedError(
          absl::StrCat("reading ", text.what, " ", path, ": ", ErrnoText(err)));
    }
    if (n == 0) break;
    contents.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  if (contents.size() > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(text.what, " ", path, " is larger than ", max_bytes,
                     " bytes; it must hold only the secret"));
  }
  return contents;
}

absl::StatusOr<std::string> LoadOrCreateSecretFile(
    const std::string& path, const SecretFileText& text, size_t max_bytes,
    const std::function<absl::StatusOr<std::string>()>& make) {
  absl::StatusOr<std::string> existing = ReadSecretFile(path, text, max_bytes);
  if (existing.ok() || !absl::IsNotFound(existing.status())) return existing;
  absl::StatusOr<std::string> contents = make();
  if (!contents.ok()) return contents.status();
  unsigned char salt[8];
  if (absl::Status s = RandomBytes(salt, sizeof(salt)); !s.ok()) return s;
  const std::string tmp =
      absl::StrCat(path, ".tmp-", getpid(), "-",
                   absl::BytesToHexString(absl::string_view(
                       reinterpret_cast<const char*>(salt), sizeof(salt))));
  const int fd = open(
      tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot create the ", text.what, " beside ", path, ": ",
        ErrnoText(errno), "; make its directory writable by kbd, or pass ",
        text.flag, " with an existing file"));
  }
  const bool written =
      fchmod(fd, 0600) == 0 && WriteAll(fd, *contents) && fsync(fd) == 0;
  const int write_err = errno;
  close(fd);
  if (!written) {
    unlink(tmp.c_str());
    return absl::InternalError(absl::StrCat("writing the ", text.what, " ", tmp,
                                            ": ", ErrnoText(write_err)));
  }
  // link() publishes the complete file or fails with EEXIST when another
  // process was first; then that process's contents are the ones.
  const int linked = link(tmp.c_str(), path.c_str());
  const int link_err = errno;
  unlink(tmp.c_str());
  if (linked != 0 && link_err != EEXIST) {
    return absl::InternalError(absl::StrCat(
        "creating the ", text.what, " ", path, ": ", ErrnoText(link_err),
        " (the data directory's file system must support hard links; or "
        "pass ",
        text.flag, " with an existing file)"));
  }
  return ReadSecretFile(path, text, max_bytes);
}

}  // namespace kbench
