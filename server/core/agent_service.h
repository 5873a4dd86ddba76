// AgentService: the core of the agent-facing extras beside jobs: problems
// as an agent is told them, sessions (an agent's run: its turns), and the
// comparison of two turns. Front ends (gRPC, HTTP, MCP through kbctl) call
// it; it knows no transport.
//
// Ownership: borrows the store, the problem registry and the job table,
// which must outlive it.
// Thread safety: every method is thread safe (the store serializes; a
// small cache of finished jobs' speedups has its own mutex).
#ifndef KBENCH_SERVER_CORE_AGENT_SERVICE_H_
#define KBENCH_SERVER_CORE_AGENT_SERVICE_H_

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "contract/problem_registry.h"
#include "kbench/v1/kbench.pb.h"
#include "server/core/job_table.h"
#include "server/store/store.h"

namespace kbench {

class AgentService {
 public:
  struct Options {
    // Problem used when a request names none.
    std::string default_problem = "gather_linear_fp32";
  };

  // A session with the figures a list of sessions shows.
  struct SessionSummary {
    v1::Session session;
    // Highest speedup among the session's timed jobs (submit_kernel,
    // profile_kernel) that passed; 0 if none.
    double best_speedup = 0;
    // The tool and verdict of the last turn ("" and UNSPECIFIED if none).
    std::string last_tool;
    v1::Verdict last_verdict = v1::VERDICT_UNSPECIFIED;
  };

  // A session with its problem and each turn's job.
  struct SessionDetail {
    struct TurnDetail {
      v1::Turn turn;
      // The job the turn ran, with its full result; nullopt for tools that
      // run none (and, logged, for a job that cannot be read).
      std::optional<v1::Job> job;
    };
    v1::Session session;
    // The problem as agents see it (PublicView); nullopt when the session
    // names none or one this kbd does not know.
    std::optional<v1::Problem> problem;
    std::vector<TurnDetail> turns;  // In order.
  };

  AgentService(const Options& options, Store* store,
               const ProblemRegistry* problems, JobTable* jobs)
      : options_(options), store_(store), problems_(problems), jobs_(jobs) {}

  // NotFound for an unknown problem. Records a get_problem turn.
  absl::StatusOr<v1::GetProblemResponse> GetProblem(
      const std::string& name, const std::string& session_id);

  // Creates a session (a new "s-..." id unless `id` is given; AlreadyExists
  // if that id is taken). NotFound for an unknown problem.
  absl::StatusOr<v1::Session> CreateSession(const std::string& problem,
                                            const std::string& id);
  absl::StatusOr<v1::GetSessionResponse> GetSession(const std::string& id);
  absl::StatusOr<std::vector<v1::Session>> ListSessions(int limit);
  // The `limit` (1..200, else InvalidArgument) most recently updated
  // sessions, summarized. Reads each session's turns and its passed timed
  // jobs (finished jobs' speedups are cached).
  absl::StatusOr<std::vector<SessionSummary>> ListSessionSummaries(int limit);
  // NotFound: "no session 'ID'".
  absl::StatusOr<SessionDetail> GetSessionDetail(const std::string& id);
  // Marks the session closed (its later turns are still recorded).
  absl::StatusOr<v1::Session> CloseSession(const std::string& id);

  // Compares turns `a` and `b` of a session. NotFound for an unknown
  // session or turn; FailedPrecondition for a turn that ran no kernel (e.g.
  // get_gpu_specs). Records a compare_runs turn unless `record_turn` is
  // false (the dashboard's view is no turn of the agent).
  absl::StatusOr<v1::CompareRunsResponse> CompareRuns(
      const std::string& session_id, int turn_a, int turn_b,
      bool record_turn = true);

  // Records a turn of a tool that runs no job (get_gpu_specs, get_problem,
  // compare_runs). Does nothing for an empty session id.
  void RecordTurn(const std::string& session_id, const std::string& tool,
                  double duration_ms, v1::Verdict verdict,
                  const std::string& message);

 private:
  absl::StatusOr<v1::RunSummary> Summarize(const v1::Turn& turn);
  SessionSummary SummarizeSession(v1::Session session);
  // The speedup of the turn's job when it is timed and passed, else 0.
  double PassedSpeedup(const v1::Turn& turn);

  Options options_;
  Store* store_;
  const ProblemRegistry* problems_;
  JobTable* jobs_;

  // Speedups of finished timed jobs by id (they never change); cleared when
  // it reaches kSpeedupCacheSize entries.
  static constexpr size_t kSpeedupCacheSize = 100000;
  absl::Mutex cache_mu_;
  std::unordered_map<std::string, double> speedups_ ABSL_GUARDED_BY(cache_mu_);
};

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_AGENT_SERVICE_H_
