// AgentService: the core of the agent-facing extras beside jobs: problems
// as an agent is told them, sessions (an agent's run: its turns), and the
// comparison of two turns. Front ends (gRPC, HTTP, MCP through kbctl) call
// it; it knows no transport.
//
// Sessions are kept by Sessions (server/core/sessions.h); this adds the
// validation of what clients send and the views built from several parts.
//
// Ownership: borrows the sessions, the store, the problem registry and the
// job table, which must outlive it.
// Thread safety: every method is thread safe (it keeps no state).
#ifndef KBENCH_SERVER_CORE_AGENT_SERVICE_H_
#define KBENCH_SERVER_CORE_AGENT_SERVICE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "contract/problem_registry.h"
#include "kbench/v1/kbench.pb.h"
#include "server/core/job_table.h"
#include "server/core/sessions.h"
#include "server/store/store.h"

namespace kbench {

class AgentService {
 public:
  struct Options {
    // Problem used when a request names none.
    std::string default_problem = "gather_linear_fp32";
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

  AgentService(const Options& options, Sessions* sessions, Store* store,
               const ProblemRegistry* problems, JobTable* jobs)
      : options_(options),
        sessions_(sessions),
        store_(store),
        problems_(problems),
        jobs_(jobs) {}

  // NotFound for an unknown problem. Records a get_problem turn.
  absl::StatusOr<v1::GetProblemResponse> GetProblem(
      const std::string& name, const std::string& session_id);

  // Creates a session (a new "s-..." id unless `id` is given; AlreadyExists
  // if that id is taken). NotFound for an unknown problem.
  absl::StatusOr<v1::Session> CreateSession(const std::string& problem,
                                            const std::string& id);
  absl::StatusOr<v1::GetSessionResponse> GetSession(const std::string& id);
  // The most recently updated sessions, each with its summary
  // (best_speedup, last_tool, last_verdict): `limit` 1..200; 0 or less
  // means 20 and more than 200 means 200 unless `strict`, which refuses
  // them with InvalidArgument (the dashboard's API).
  absl::StatusOr<std::vector<v1::Session>> ListSessions(int limit,
                                                        bool strict = false);
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

 private:
  absl::StatusOr<v1::RunSummary> Summarize(const v1::Turn& turn);
  absl::StatusOr<v1::CompareRunsResponse> Compare(const std::string& session_id,
                                                  int turn_a, int turn_b);

  Options options_;
  Sessions* sessions_;
  Store* store_;  // Sources, for diffs.
  const ProblemRegistry* problems_;
  JobTable* jobs_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_AGENT_SERVICE_H_
