// Store: kbd's embedded SQLite database (WAL mode) for jobs, kernel sources,
// compiled cubins (the persistent compile cache), sessions and their turns.
// Implemented in store.cc (jobs, sources, compile cache) and
// store_sessions.cc (sessions, turns); the schema is in store_schema.h.
//
// Ownership: owns one sqlite3 connection, closed by the destructor.
// Thread safety: every method is safe to call from many threads; calls are
// serialized on one internal mutex (each is a short statement or
// transaction).
#ifndef KBENCH_SERVER_STORE_H_
#define KBENCH_SERVER_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "kbench/v1/kbench.pb.h"
#include "kbench/v1/report.pb.h"

struct sqlite3;

namespace kbench {

class Store {
 public:
  struct Options {
    // Database file; created with its tables when missing. ":memory:" is
    // allowed (tests).
    std::string path;
    // How long a statement waits for a lock held by another process.
    int busy_timeout_ms = 5000;
  };

  // Opens (or creates) the database, sets journal_mode=WAL and
  // synchronous=NORMAL, and creates or migrates the schema.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const Options& options);
  ~Store();

  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // ---- Jobs. A job is stored as its proto plus indexed columns (id, kind,
  // stage, session_id, problem, created/updated times, verdict), and the
  // request it was made from (source cleared; the source is stored once by
  // digest).

  // Inserts a new job. AlreadyExists if the id is taken.
  absl::Status InsertJob(const v1::Job& job, const v1::KernelRequest& request);
  // Replaces the stored job (stage, result, ...). NotFound if absent.
  absl::Status UpdateJob(const v1::Job& job);
  // NotFound: "no job 'ID'".
  absl::StatusOr<v1::Job> GetJob(const std::string& id);
  // The request a job was made from, without source.
  absl::StatusOr<v1::KernelRequest> GetJobRequest(const std::string& id);

  struct JobQuery {
    int page_size = 20;      // 1..200; 0 means 20; others are clamped.
    std::string page_token;  // Opaque; from the previous page. "" = first.
    std::string session_id;  // Filter when non-empty.
    v1::Stage stage = v1::STAGE_UNSPECIFIED;  // Filter when set.
  };
  struct JobPage {
    std::vector<v1::Job> jobs;    // Newest first (created time, then id).
    std::string next_page_token;  // "" on the last page.
  };
  // InvalidArgument for a malformed page token.
  absl::StatusOr<JobPage> ListJobs(const JobQuery& query);

  // Jobs whose stage is not DONE (for recovery after a restart), oldest
  // first.
  absl::StatusOr<std::vector<v1::Job>> ListUnfinishedJobs();

  // ---- Sources, stored once by sha256 digest.
  absl::Status PutSource(const std::string& digest, const std::string& text);
  // NotFound when absent.
  absl::StatusOr<std::string> GetSource(const std::string& digest);

  // ---- Compile cache: key = NvrtcCompiler::CacheKey.
  struct CompiledEntry {
    v1::CompileReport report;
    std::string cubin;
  };
  absl::Status PutCompiled(const std::string& key,
                           const v1::CompileReport& report,
                           const std::string& cubin);
  // nullopt when absent.
  absl::StatusOr<std::optional<CompiledEntry>> GetCompiled(
      const std::string& key);

  // ---- Sessions and turns.
  // Creates the session if it does not exist (status "open"), else updates
  // updated_unix_ms (and problem, if it was empty).
  absl::Status TouchSession(const std::string& id, const std::string& problem,
                            int64_t now_unix_ms);
  // Appends a turn: assigns seq = previous max + 1 within the session,
  // touches the session (creating it, as TouchSession does, if missing) and
  // bumps its turn count, in one transaction. A created_unix_ms of 0 is set
  // to now. Returns the stored turn.
  absl::StatusOr<v1::Turn> AppendTurn(const v1::Turn& turn);
  // Sets the session's status ("open", "submitted", "closed"; anything else
  // is InvalidArgument). NotFound: "no session 'ID'".
  absl::Status SetSessionStatus(const std::string& id,
                                const std::string& status);
  // NotFound: "no session 'ID'".
  absl::StatusOr<v1::Session> GetSession(const std::string& id);
  // Newest first (updated time), at most `limit` (InvalidArgument if
  // limit <= 0).
  absl::StatusOr<std::vector<v1::Session>> ListSessions(int limit);
  // In seq order; empty for an unknown session.
  absl::StatusOr<std::vector<v1::Turn>> ListTurns(
      const std::string& session_id);

 private:
  explicit Store(sqlite3* db) : db_(db) {}
  absl::Status Exec(const char* sql) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Migrate() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  sqlite3* db_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kbench

#endif  // KBENCH_SERVER_STORE_H_
