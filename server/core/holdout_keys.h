// HoldoutKeys: the secret behind hidden cases. For each submission kbd draws
// the hidden cases of every holdout class (contract/holdout.h) from a key
// derived from this secret and the job's id, so the cases differ from one
// submission to the next, and nobody without the secret can know them: no
// repository file, API, log line or job record holds them.
//  - The secret lives in a file: by default DATA_DIR/holdout.secret, which
//    kbd creates on its first start (32 random bytes as 64 hex digits, mode
//    0600, created atomically); or the operator's file, given with
//    --holdout-secret-file (a regular file of this user, mode 0600, 32 to
//    4096 bytes). It is never sent to workers, clients or logs: workers get
//    the drawn cases, and clients only the class a failing case was in.
//  - Keys are HMAC-SHA256 values: a job's key is
//    HMAC(HMAC(secret, "kbench holdout secret v1"), problem, job id).
//
// Ownership: owns the derived secret. Thread safety: immutable after
// construction; safe to share between threads.
#ifndef KBENCH_SERVER_CORE_HOLDOUT_KEYS_H_
#define KBENCH_SERVER_CORE_HOLDOUT_KEYS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kbench {

// The file name of kbd's holdout secret inside its data directory.
inline constexpr char kHoldoutSecretFileName[] = "holdout.secret";

class HoldoutKeys {
 public:
  struct Options {
    // The operator's secret file; "" = DATA_DIR/holdout.secret, created on
    // first start.
    std::string secret_file;
    // kbd's data directory (used when secret_file is "").
    std::string data_dir;
  };

  // Reads (or first creates) the secret file. Errors name the file and
  // what to do: NotFound for a missing operator file, PermissionDenied for
  // a wrong owner or mode, InvalidArgument for a secret too short or long.
  static absl::StatusOr<std::unique_ptr<HoldoutKeys>> Load(
      const Options& options);
  // A secret of this process only (tests, and a core built without kbd).
  static std::unique_ptr<HoldoutKeys> Ephemeral();
  // A fresh unpredictable key, for run_correctness's `random` set.
  static std::string FreshKey();

  // The key job `job_id`'s hidden cases of `problem` are drawn from.
  std::string ForJob(absl::string_view problem, absl::string_view job_id) const;

  // Where the secret lives ("(in memory)" for Ephemeral), for a log line.
  const std::string& where() const { return where_; }

 private:
  HoldoutKeys(absl::string_view secret, std::string where);

  std::string master_;  // HMAC(secret, label): the secret never stays.
  std::string where_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_HOLDOUT_KEYS_H_
