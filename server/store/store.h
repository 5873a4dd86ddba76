// Store: kbd's embedded SQLite database (WAL mode) for jobs, kernel sources,
// compiled cubins (the persistent compile cache), sessions and their turns,
// and sweeps. Implemented in store.cc (jobs), store_blobs.cc (sources,
// compile cache), store_sessions.cc (sessions, turns), store_sweeps.cc
// (sweeps), store_health.cc (CheckWritable) and retention.cc
// (Prune); the schema is in store_schema.h.
//
// A row that cannot be read back (a proto that does not parse, text that is
// not UTF-8, written by an older kbd or by hand) never stops a read: lists
// skip it, single reads salvage what the indexed columns hold, recovery
// marks an unfinished one failed; each is logged once with its id and
// counted in Stats. Writes refuse what would not read back
// (InvalidArgument), so kbd itself cannot make such a row.
//
// Ownership: owns one sqlite3 connection (and, for a file, a second one for
// CheckWritable), closed by the destructor.
// Thread safety: every method is safe to call from many threads; calls are
// serialized on one internal mutex (each is a short statement or
// transaction; Prune takes it once per batch). CheckWritable has its own
// lock and connection, so /healthz does not queue behind other calls.
#ifndef KBENCH_SERVER_STORE_STORE_H_
#define KBENCH_SERVER_STORE_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/untrusted_input.h"  // IsValidUtf8, ScrubUtf8, FindNonUtf8Field.
#include "google/protobuf/message.h"
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
    // CheckWritable: how long its write waits for a lock held elsewhere
    // before it reports the store unwritable.
    int health_timeout_ms = 1000;
    // CheckWritable answers from its last result for this long, so a
    // /healthz poll costs no write.
    absl::Duration health_cache = absl::Seconds(1);
    // CheckWritable fails when the file system holding the database has
    // less space than this left for kbd (for root: the blocks reserved for
    // root count). SQLite's WAL reuses its pages, so a tiny write can still
    // succeed on a full disk; this catches it before the next real write
    // fails. 0 turns the check off; ignored for ":memory:".
    int64_t min_free_bytes = int64_t{32} << 20;
  };

  // What the store has met and done since it was opened.
  struct Stats {
    // Rows that could not be read back (skipped, salvaged or repaired).
    int64_t unreadable_rows = 0;
    // Of those, unfinished jobs that ListUnfinishedJobs marked failed.
    int64_t repaired_jobs = 0;
    // Writes refused because they would not read back.
    int64_t refused_writes = 0;
    // Rows deleted by Prune, per table.
    int64_t pruned_jobs = 0;
    int64_t pruned_turns = 0;
    int64_t pruned_sources = 0;
    int64_t pruned_compiled = 0;
    int64_t pruned_sweeps = 0;
  };

  // What Prune deletes. Finished jobs, session turns, sweeps and
  // compile-cache entries (by last use) older than max_age go; then, while the
  // store holds more than max_bytes, the oldest of them go first until it holds
  // at most 90% of max_bytes. Sources go once no kept job or turn refers
  // to them. Sessions (their summary rows) and unfinished jobs are kept.
  struct RetentionPolicy {
    // Age limit; zero or negative means none.
    absl::Duration max_age = absl::Hours(24 * 30);
    // Size limit in bytes of used database pages; 0 means none.
    int64_t max_bytes = int64_t{2} << 30;
    // A source younger than this is kept even if nothing refers to it yet
    // (Submit stores the source just before its job).
    absl::Duration source_grace = absl::Minutes(10);
    // Rows deleted per transaction; other calls run between batches.
    int batch_rows = 500;
  };
  struct PruneStats {
    int64_t jobs = 0, turns = 0, sources = 0, compiled = 0, sweeps = 0;
    int64_t used_bytes_before = 0, used_bytes_after = 0;
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

  // Inserts a new job. AlreadyExists if the id is taken; InvalidArgument
  // (naming the field) if a string of the job or request is not UTF-8.
  absl::Status InsertJob(const v1::Job& job, const v1::KernelRequest& request);
  // Replaces the stored job (stage, result, ...). NotFound if absent;
  // InvalidArgument as for InsertJob.
  absl::Status UpdateJob(const v1::Job& job);
  // What finishing a job adds to its session.
  struct SessionTurn {
    v1::Turn turn;       // Appended as AppendTurn does.
    std::string status;  // When set, the session's new status.
  };
  // Writes a finished job and, when `turn` is given, its session's turn
  // (and status), in one transaction: a reader never sees the job DONE
  // without its turn. Errors as UpdateJob, AppendTurn and SetSessionStatus;
  // on any error nothing is written.
  absl::Status FinishJob(const v1::Job& job, const SessionTurn* turn);
  // NotFound: "no job 'ID'". A row that does not parse comes back salvaged
  // from its indexed columns: stage DONE, verdict ERROR, error DATA_LOSS.
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
  // InvalidArgument for a malformed page token. Rows that do not parse are
  // skipped (a page may then hold fewer than page_size jobs).
  absl::StatusOr<JobPage> ListJobs(const JobQuery& query);

  // Jobs whose stage is not DONE (for recovery after a restart), oldest
  // first. A row among them that does not parse is rewritten, from its
  // indexed columns, as DONE with verdict ERROR and a DATA_LOSS error ("the
  // stored job could not be read"), so that it is not stuck; it is not
  // returned.
  absl::StatusOr<std::vector<v1::Job>> ListUnfinishedJobs();

  // ---- Sources, stored once by sha256 digest. InvalidArgument when `text`
  // is not UTF-8.
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
  // nullopt when absent, or when the stored report does not parse.
  absl::StatusOr<std::optional<CompiledEntry>> GetCompiled(
      const std::string& key);

  // ---- Sessions and turns.
  // Creates the session if it does not exist (status "open"), else updates
  // updated_unix_ms (and problem, if it was empty).
  absl::Status TouchSession(const std::string& id, const std::string& problem,
                            int64_t now_unix_ms);
  // Appends a turn: assigns seq = previous max + 1 within the session,
  // touches the session (creating it, as TouchSession does, if missing),
  // bumps its turn count and updates its summary (best_speedup, last_tool,
  // last_verdict), in one transaction. A created_unix_ms of 0 is set to
  // now. Returns the stored turn.
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
  // In seq order; empty for an unknown session. Turns whose text is not
  // UTF-8 are skipped.
  absl::StatusOr<std::vector<v1::Turn>> ListTurns(
      const std::string& session_id);

  // ---- Sweeps (server/store/store_sweeps.cc), stored as made: their rows
  // name problems and jobs; the jobs' states are read from the jobs.
  // AlreadyExists if the id is taken; InvalidArgument for an empty id or a
  // string that is not UTF-8.
  absl::Status InsertSweep(const v1::Sweep& sweep);
  // NotFound: "no sweep 'ID'"; DataLoss when the row does not parse.
  absl::StatusOr<v1::Sweep> GetSweep(const std::string& id);

  // ---- Retention (server/store/retention.cc). Deletes what `policy` says, as
  // of `now_unix_ms`, in batches. SQLite keeps freed pages and reuses them
  // for new rows: the file stops growing but does not shrink (run `sqlite3
  // kbench.db VACUUM` with kbd stopped to shrink it).
  absl::StatusOr<PruneStats> Prune(const RetentionPolicy& policy,
                                   int64_t now_unix_ms);
  // Bytes of database pages in use (page count less free pages, times the
  // page size).
  absl::StatusOr<int64_t> UsedBytes();

  // ---- Health. OK when the store can be written: a one-row upsert into
  // the health table succeeds within Options::health_timeout_ms and the
  // file system has Options::min_free_bytes left. Otherwise UNAVAILABLE
  // (locked, read-only, I/O error, disk full) or RESOURCE_EXHAUSTED (too
  // little free space), with what to do. Answers from its last result for
  // Options::health_cache. CheckWritableAt takes the time (tests).
  absl::Status CheckWritable();
  absl::Status CheckWritableAt(absl::Time now);

  Stats stats() const;

 private:
  Store(sqlite3* db, const Options& options) : options_(options), db_(db) {}
  absl::Status Exec(const char* sql) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The bodies of UpdateJob, AppendTurn and SetSessionStatus, inside the
  // caller's transaction (if any).
  absl::Status UpdateJobLocked(const v1::Job& job)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<v1::Turn> AppendTurnLocked(v1::Turn turn)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status SetSessionStatusLocked(const std::string& id,
                                      const std::string& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Migrate() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Parses the proto of row `id` of `table`; false (counted, logged the
  // first time) when it does not parse. A row already known to be
  // unreadable is not parsed again: protobuf logs every failed parse, and
  // a bad row that the dashboard polls would flood the log. Writes of the
  // row forget that it was unreadable.
  bool ParseRow(absl::string_view table, absl::string_view id,
                absl::string_view blob, google::protobuf::MessageLite* proto)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts an unreadable row and logs it the first time `id` is seen.
  void NoteUnreadable(absl::string_view table, absl::string_view id,
                      absl::string_view why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // InvalidArgument (counted) when `message` would not parse back.
  absl::Status CheckWritableProto(const google::protobuf::Message& message,
                                  absl::string_view what)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckText(absl::string_view text, absl::string_view what)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckFreeSpace() const;
  absl::Status WriteHealthRow(int64_t now_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(health_write_mu_);
  // One Prune step: deletes up to `limit` rows of `table` (with the
  // sources they alone referred to); returns the rows deleted.
  absl::StatusOr<int64_t> PruneBatch(const std::string& table,
                                     int64_t older_than_ms, int limit,
                                     int64_t source_cutoff_ms);
  absl::StatusOr<int64_t> PruneOrphanSources(int64_t created_before_ms,
                                             int limit);
  absl::StatusOr<int64_t> UsedBytesLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  sqlite3* db_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
  // "table/id" of unreadable rows already logged (bounded).
  std::set<std::string> logged_unreadable_ ABSL_GUARDED_BY(mu_);

  // CheckWritable's connection and write (taken before mu_ for
  // ":memory:"), and apart from it its cached answer.
  absl::Mutex health_write_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  sqlite3* health_db_ ABSL_GUARDED_BY(health_write_mu_) = nullptr;
  absl::Mutex health_mu_;
  absl::Time health_checked_ ABSL_GUARDED_BY(health_mu_) = absl::InfinitePast();
  absl::Status health_status_ ABSL_GUARDED_BY(health_mu_);
  bool health_checking_ ABSL_GUARDED_BY(health_mu_) = false;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_STORE_STORE_H_
