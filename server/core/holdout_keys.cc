#include "server/core/holdout_keys.h"

#include <string>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/digest.h"
#include "base/secret_file.h"

namespace kbench {
namespace {

constexpr size_t kSecretBytes = 32;
constexpr size_t kMinSecretChars = 32;
constexpr size_t kMaxSecretFileBytes = 4096;

const SecretFileText& FileText() {
  static const SecretFileText* text = new SecretFileText{
      "holdout secret file",
      absl::StrCat("give an existing file of at least ", kMinSecretChars,
                   " random characters (mode 0600), or leave "
                   "--holdout-secret-file out and kbd creates DATA_DIR/",
                   kHoldoutSecretFileName),
      "know every hidden case a submission is checked on",
      "--holdout-secret-file"};
  return *text;
}

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  if (!RandomBytes(reinterpret_cast<unsigned char*>(raw.data()), bytes).ok()) {
    return "";
  }
  return absl::BytesToHexString(raw);
}

}  // namespace

HoldoutKeys::HoldoutKeys(absl::string_view secret, std::string where)
    : master_(HmacSha256(secret, "kbench holdout secret v1")),
      where_(std::move(where)) {}

absl::StatusOr<std::unique_ptr<HoldoutKeys>> HoldoutKeys::Load(
    const Options& options) {
  const bool given = !options.secret_file.empty();
  const std::string path =
      given ? options.secret_file
            : absl::StrCat(options.data_dir, "/", kHoldoutSecretFileName);
  absl::StatusOr<std::string> text =
      given ? ReadSecretFile(path, FileText(), kMaxSecretFileBytes)
            : LoadOrCreateSecretFile(
                  path, FileText(), kMaxSecretFileBytes,
                  []() -> absl::StatusOr<std::string> {
                    std::string hex = RandomHex(kSecretBytes);
                    if (hex.empty()) {
                      return absl::InternalError(
                          "no random source for the holdout secret");
                    }
                    return absl::StrCat(hex, "\n");
                  });
  if (!text.ok()) return text.status();
  const absl::string_view secret = absl::StripAsciiWhitespace(*text);
  if (secret.size() < kMinSecretChars) {
    return absl::InvalidArgumentError(absl::StrCat(
        "holdout secret file ", path, " holds ", secret.size(),
        " characters; a secret needs at least ", kMinSecretChars,
        " (e.g. `head -c 32 /dev/urandom | xxd -p -c 64 > FILE`)"));
  }
  return std::unique_ptr<HoldoutKeys>(new HoldoutKeys(secret, path));
}

std::unique_ptr<HoldoutKeys> HoldoutKeys::Ephemeral() {
  return std::unique_ptr<HoldoutKeys>(
      new HoldoutKeys(FreshKey(), "(in memory)"));
}

std::string HoldoutKeys::FreshKey() {
  std::string key = RandomHex(kSecretBytes);
  if (key.empty()) {
    // getrandom and /dev/urandom both failed: abseil's generator, seeded
    // from the OS's entropy when the process started.
    absl::BitGen gen;
    for (int i = 0; i < 4; ++i) {
      absl::StrAppend(
          &key, absl::Hex(absl::Uniform<uint64_t>(gen), absl::kZeroPad16));
    }
  }
  return key;
}

std::string HoldoutKeys::ForJob(absl::string_view problem,
                                absl::string_view job_id) const {
  return HmacSha256(master_, absl::StrCat("job", std::string(1, '\0'), problem,
                                          std::string(1, '\0'), job_id));
}

}  // namespace kbench
