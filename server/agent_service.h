// AgentService: the core of the agent-facing extras beside jobs: problems
// as an agent is told them, sessions (an agent's run: its turns), and the
// comparison of two turns. Front ends (gRPC, HTTP, MCP through kbctl) call
// it; it knows no transport.
//
// Ownership: borrows the store, the problem registry and the job table,
// which must outlive it.
// Thread safety: every method is thread safe (the store serializes).
#ifndef KBENCH_SERVER_AGENT_SERVICE_H_
#define KBENCH_SERVER_AGENT_SERVICE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kbench/v1/kbench.pb.h"
#include "server/job_table.h"
#include "server/problem_registry.h"
#include "server/store.h"

namespace kbench {

class AgentService {
 public:
  struct Options {
    // Problem used when a request names none.
    std::string default_problem = "gather_linear_fp32";
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
  // Marks the session closed (its later turns are still recorded).
  absl::StatusOr<v1::Session> CloseSession(const std::string& id);

  // Compares turns `a` and `b` of a session. NotFound for an unknown
  // session or turn; FailedPrecondition for a turn that ran no kernel (e.g.
  // get_gpu_specs). Records a compare_runs turn.
  absl::StatusOr<v1::CompareRunsResponse> CompareRuns(
      const std::string& session_id, int turn_a, int turn_b);

  // Records a turn of a tool that runs no job (get_gpu_specs, get_problem,
  // compare_runs). Does nothing for an empty session id.
  void RecordTurn(const std::string& session_id, const std::string& tool,
                  double duration_ms, v1::Verdict verdict,
                  const std::string& message);

 private:
  absl::StatusOr<v1::RunSummary> Summarize(const v1::Turn& turn);

  Options options_;
  Store* store_;
  const ProblemRegistry* problems_;
  JobTable* jobs_;
};

}  // namespace kbench

#endif  // KBENCH_SERVER_AGENT_SERVICE_H_
