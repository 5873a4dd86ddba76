// FakeToolBackend: the AgentToolBackend of the JSON and MCP fuzz targets.
// It answers every call at once with canned results shaped by the request,
// so the tool layer's mapping and its text renderers see many kinds of
// result, with the caller's own bytes in them: the kernel source goes into
// the compile log and diagnostics, the launch plan is parsed from it, the
// session id and problem name come back in the job, and a hash of the
// request picks the verdict (passed, failed, compile error, crashed,
// rejected) or a refusal (UNAVAILABLE, NOT_FOUND, INVALID_ARGUMENT).
//
// Ownership: holds copies of what it is given. Thread safety: not thread
// safe (a counter is bumped per call); each fuzz target has one thread.
#ifndef KBENCH_TESTS_FUZZ_FAKE_BACKEND_H_
#define KBENCH_TESTS_FUZZ_FAKE_BACKEND_H_

#include <cstdint>
#include <string>

#include "agent/agent_tools.h"
#include "kbench/v1/problem.pb.h"

namespace kbench {
namespace fuzz {

class FakeToolBackend : public AgentToolBackend {
 public:
  // `problem` is what get_problem returns (by its name, or for an empty
  // name) and what jobs are said to have run against.
  explicit FakeToolBackend(v1::Problem problem);

  absl::StatusOr<v1::GetGpuSpecsResponse> GetGpuSpecs(
      const std::string& session_id) override;
  absl::StatusOr<v1::GetProblemResponse> GetProblem(
      const std::string& name, const std::string& session_id) override;
  absl::StatusOr<v1::ListProblemsResponse> ListProblems(
      const std::string& suite) override;
  absl::StatusOr<v1::Job> RunJob(v1::JobKind kind,
                                 const v1::KernelRequest& request) override;
  absl::StatusOr<v1::CompareRunsResponse> CompareRuns(
      const std::string& session_id, int turn_a, int turn_b) override;

  // Calls answered so far.
  int64_t calls() const { return calls_; }

 private:
  v1::Problem problem_;
  int64_t calls_ = 0;
};

}  // namespace fuzz
}  // namespace kbench

#endif  // KBENCH_TESTS_FUZZ_FAKE_BACKEND_H_
