// Sessions: the one owner of what kbd records about agent sessions. Every
// tool call that names a session is a turn of it:
//  - a job's turn is built by TurnOf when the job finishes, and written by
//    the job's finisher in the job's own store transaction
//    (Store::FinishJob);
//  - calls that run no job (get_gpu_specs, get_problem, compare_runs) and
//    job tools refused before a job existed are recorded here (Record,
//    RecordRefused).
// Each turn updates the session's summary (best speedup, last tool, last
// verdict) in the same write, so listing sessions, which the dashboard
// polls, is one query.
//
// Ownership: borrows the Store (must outlive it).
// Thread safety: every method is thread safe (the Store serializes writes).
#ifndef KBENCH_SERVER_CORE_SESSIONS_H_
#define KBENCH_SERVER_CORE_SESSIONS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kbench/v1/kbench.pb.h"
#include "server/store/store.h"

namespace kbench {

class Sessions {
 public:
  struct Options {
    // Longest turn message kept (longer ones are cut at a UTF-8 boundary):
    // a refusal's message is built from the request.
    size_t max_message_bytes = 2048;
    // Most sessions one list returns.
    int max_list = 200;
  };

  Sessions(const Options& options, Store* store)
      : options_(options), store_(store) {}

  // The turn a finished job adds to its session, with the session status
  // it sets ("submitted" after submit_kernel); nullopt when the job has no
  // session. A timed job that passed carries its speedup; one outside
  // (0, 10^6] is recorded as 0 (result checks refuse those before here).
  std::optional<Store::SessionTurn> TurnOf(const v1::Job& job) const;

  // Records a call that ran no job. Does nothing for an empty session id;
  // a failed write is logged (a turn is never worth failing the call).
  void Record(const std::string& session_id, const std::string& tool,
              double duration_ms, v1::Verdict verdict,
              const std::string& message);
  // Records a job tool refused before its job existed: REJECTED when the
  // request is at fault (InvalidArgument, NotFound, OutOfRange,
  // ResourceExhausted), ERROR otherwise, with the refusal's message. Does
  // nothing for an empty or invalid session id.
  void RecordRefused(const std::string& session_id, v1::JobKind kind,
                     double duration_ms, const absl::Status& refusal);
  // A job of the session started: creates the session if needed, sets its
  // problem if it had none, moves its updated time.
  void Touch(const std::string& session_id, const std::string& problem);

  // Creates session `id` (validated by the caller). AlreadyExists if taken.
  absl::StatusOr<v1::Session> Create(const std::string& id,
                                     const std::string& problem);
  // NotFound: "no session 'ID'".
  absl::StatusOr<v1::Session> Get(const std::string& id);
  // The `limit` (1..max_list, else InvalidArgument) most recently updated
  // sessions, each with its summary.
  absl::StatusOr<std::vector<v1::Session>> List(int limit);
  absl::StatusOr<std::vector<v1::Turn>> Turns(const std::string& id);
  // Marks the session closed (its later turns are still recorded).
  absl::StatusOr<v1::Session> Close(const std::string& id);

 private:
  void Append(v1::Turn turn);

  const Options options_;
  Store* store_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_SESSIONS_H_
