#include "contract/worker_auth.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/secret_file.h"

namespace kbench {
namespace {

constexpr size_t kTokenBytes = 32;
constexpr size_t kMinTokenChars = 32;
constexpr size_t kMaxTokenChars = 512;
// A token file larger than this is not a token file.
constexpr size_t kMaxTokenFileBytes = 4096;

const SecretFileText& TokenFileText() {
  static const SecretFileText* text = new SecretFileText{
      "worker token file",
      absl::StrCat("kbd creates DATA_DIR/", kWorkerTokenFileName,
                   " on its first start: copy that file here (mode 0600)"),
      "lease jobs and forge their results", "--worker-token-file"};
  return *text;
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
  absl::StatusOr<std::string> text =
      ReadSecretFile(path, TokenFileText(), kMaxTokenFileBytes);
  if (!text.ok()) return text.status();
  const absl::string_view token = absl::StripAsciiWhitespace(*text);
  if (absl::Status s = ValidateWorkerToken(token, path); !s.ok()) return s;
  return std::string(token);
}

absl::StatusOr<std::string> LoadOrCreateWorkerTokenFile(
    const std::string& path) {
  absl::StatusOr<std::string> text = LoadOrCreateSecretFile(
      path, TokenFileText(), kMaxTokenFileBytes,
      []() -> absl::StatusOr<std::string> {
        absl::StatusOr<std::string> token = GenerateWorkerToken();
        if (!token.ok()) return token.status();
        return absl::StrCat(*token, "\n");
      });
  if (!text.ok()) return text.status();
  const absl::string_view token = absl::StripAsciiWhitespace(*text);
  if (absl::Status s = ValidateWorkerToken(token, path); !s.ok()) return s;
  return std::string(token);
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
