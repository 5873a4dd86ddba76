// Shared by the McpServer tests (mcp_server_test.cc, mcp_session_test.cc):
// a scripted AgentToolBackend that records the session of every call, and
// JSON-RPC request builders.
#ifndef KBENCH_CLIENT_MCP_FIXTURES_H_
#define KBENCH_CLIENT_MCP_FIXTURES_H_

#include <string>
#include <vector>

#include "client/mcp_server.h"
#include "nlohmann/json.hpp"

namespace kbench {
namespace mcp_testing {

using nlohmann::json;

class FakeBackend : public AgentToolBackend {
 public:
  absl::StatusOr<v1::GetGpuSpecsResponse> GetGpuSpecs(
      const std::string& session_id) override {
    sessions.push_back(session_id);
    if (!specs_status.ok()) return specs_status;
    v1::GetGpuSpecsResponse r;
    v1::GpuSpec* g = r.add_gpus()->mutable_spec();
    g->set_name("NVIDIA H200");
    g->set_arch("sm_90");
    g->set_sm_count(132);
    return r;
  }
  absl::StatusOr<v1::ListProblemsResponse> ListProblems(
      const std::string&) override {
    v1::ListProblemsResponse r;
    r.add_problems()->set_name("gather_linear_fp32");
    return r;
  }
  absl::StatusOr<v1::GetProblemResponse> GetProblem(
      const std::string& name, const std::string& session_id) override {
    sessions.push_back(session_id);
    v1::GetProblemResponse r;
    r.mutable_problem()->set_name(name.empty() ? "gather_linear_fp32" : name);
    r.set_entry_prototype("extern \"C\" __global__ void gather_linear(...)");
    r.set_contract("KERNEL CONTRACT ...");
    return r;
  }
  absl::StatusOr<v1::Job> RunJob(v1::JobKind kind,
                                 const v1::KernelRequest& request) override {
    sessions.push_back(request.session_id());
    last_request = request;
    v1::Job job;
    job.set_id("j-1");
    job.set_kind(kind);
    job.set_problem("gather_linear_fp32");
    job.set_filename(request.filename());
    job.mutable_result()->set_verdict(verdict);
    job.mutable_result()->set_message(
        verdict == v1::VERDICT_PASSED ? "" : "odd/b7: 3 of 56 outputs wrong");
    return job;
  }
  absl::StatusOr<v1::CompareRunsResponse> CompareRuns(
      const std::string& session_id, int a, int b) override {
    sessions.push_back(session_id);
    v1::CompareRunsResponse r;
    r.mutable_a()->set_turn(a);
    r.mutable_b()->set_turn(b);
    return r;
  }

  absl::Status specs_status = absl::OkStatus();
  v1::Verdict verdict = v1::VERDICT_PASSED;
  v1::KernelRequest last_request;
  std::vector<std::string> sessions;  // The session of every call, in order.
};

inline json Request(const json& id, const std::string& method,
                    const json& params = json()) {
  json m = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) m["params"] = params;
  return m;
}

inline json Call(const json& id, const std::string& tool, const json& args) {
  return Request(id, "tools/call", {{"name", tool}, {"arguments", args}});
}

}  // namespace mcp_testing
}  // namespace kbench

#endif  // KBENCH_CLIENT_MCP_FIXTURES_H_
