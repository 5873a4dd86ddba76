// The agent tool definitions (one source for MCP, HTTP and function-calling
// formats) and CallAgentTool's mapping of arguments and results, against a
// scripted backend.
#include "agent/agent_tools.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "agent/agent_report.h"

namespace kbench {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class FakeBackend : public AgentToolBackend {
 public:
  absl::StatusOr<v1::GetGpuSpecsResponse> GetGpuSpecs(
      const std::string& session_id) override {
    last_session = session_id;
    if (!specs_status.ok()) return specs_status;
    v1::GetGpuSpecsResponse r;
    v1::GpuSpec* g = r.add_gpus()->mutable_spec();
    g->set_name("NVIDIA H200");
    g->set_arch("sm_90");
    g->set_sm_count(132);
    g->set_measured_copy_gbps(4200);
    g->set_measured_fp32_tflops(60.5);
    g->set_datasheet_name("H200 SXM datasheet");
    g->set_datasheet_memory_gbps(4800);
    return r;
  }
  absl::StatusOr<v1::ListProblemsResponse> ListProblems(
      const std::string& suite) override {
    if (suite == "nope") {
      return absl::NotFoundError(
          "unknown suite 'nope'; known suites: collectives");
    }
    v1::ListProblemsResponse r;
    v1::Problem* p = r.add_problems();
    p->set_name("gather_linear_fp32");
    p->set_title("Virtual all-gather then linear (fp32)");
    p->add_suites("collectives");
    r.add_suites("collectives");
    return r;
  }
  absl::StatusOr<v1::GetProblemResponse> GetProblem(
      const std::string& name, const std::string& session_id) override {
    v1::GetProblemResponse r;
    r.mutable_problem()->set_name(name.empty() ? "gather_linear_fp32" : name);
    r.set_entry_prototype("extern \"C\" __global__ void gather_linear(...)");
    r.set_contract("KERNEL CONTRACT ...");
    return r;
  }
  absl::StatusOr<v1::Job> RunJob(v1::JobKind kind,
                                 const v1::KernelRequest& request) override {
    last_kind = kind;
    last_request = request;
    if (!run_status.ok()) return run_status;
    v1::Job job;
    job.set_id("j-1");
    job.set_kind(kind);
    job.set_problem("gather_linear_fp32");
    job.mutable_result()->set_verdict(verdict);
    job.mutable_result()->set_message(
        verdict == v1::VERDICT_PASSED ? "" : "odd/b7: 3 of 56 outputs wrong");
    return job;
  }
  absl::StatusOr<v1::CompareRunsResponse> CompareRuns(
      const std::string& session_id, int a, int b) override {
    last_session = session_id;
    v1::CompareRunsResponse r;
    r.mutable_a()->set_turn(a);
    r.mutable_b()->set_turn(b);
    r.set_source_diff("--- turn 1\n+++ turn 2\n@@ -1 +1 @@\n-a\n+b\n");
    return r;
  }

  absl::Status specs_status = absl::OkStatus();
  absl::Status run_status = absl::OkStatus();
  v1::Verdict verdict = v1::VERDICT_PASSED;
  v1::JobKind last_kind = v1::JOB_KIND_UNSPECIFIED;
  v1::KernelRequest last_request;
  std::string last_session;
};

TEST(AgentToolDefsTest, NamesAndSchemasAreWellFormed) {
  const std::regex name_re("^[a-z0-9_]{1,64}$");
  std::set<std::string> names;
  for (const AgentToolDef& d : AgentToolDefs()) {
    EXPECT_TRUE(std::regex_match(d.name, name_re)) << d.name;
    EXPECT_TRUE(names.insert(d.name).second) << "duplicate " << d.name;
    EXPECT_GT(d.description.size(), 40u) << d.name;
    EXPECT_EQ(d.input_schema["type"], "object") << d.name;
    ASSERT_TRUE(d.input_schema["properties"].is_object()) << d.name;
    if (d.input_schema.contains("required")) {
      for (const json& r : d.input_schema["required"]) {
        EXPECT_TRUE(d.input_schema["properties"].contains(r.get<std::string>()))
            << d.name << " requires undeclared " << r;
      }
    }
  }
  for (const char* expected :
       {"get_gpu_specs", "get_problem", "list_problems", "compile_kernel",
        "run_correctness", "profile_kernel", "submit_kernel", "sanitize_kernel",
        "compare_runs"}) {
    EXPECT_TRUE(names.count(expected)) << expected;
  }
}

TEST(AgentToolDefsTest, RendersEachFormat) {
  const size_t n = AgentToolDefs().size();
  absl::StatusOr<json> openai = RenderAgentTools("openai");
  ASSERT_TRUE(openai.ok());
  ASSERT_EQ(openai->size(), n);
  EXPECT_EQ((*openai)[0]["type"], "function");
  EXPECT_EQ((*openai)[0]["function"]["parameters"]["type"], "object");
  absl::StatusOr<json> anthropic = RenderAgentTools("anthropic");
  ASSERT_TRUE(anthropic.ok());
  EXPECT_TRUE((*anthropic)[0].contains("input_schema"));
  absl::StatusOr<json> mcp = RenderAgentTools("mcp");
  ASSERT_TRUE(mcp.ok());
  ASSERT_EQ((*mcp)["tools"].size(), n);
  EXPECT_TRUE((*mcp)["tools"][0].contains("inputSchema"));
  EXPECT_EQ(RenderAgentTools("yaml").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CallAgentToolTest, ProtocolMistakesAreStatuses) {
  FakeBackend backend;
  EXPECT_EQ(CallAgentTool(backend, "nope", json::object(), "").status().code(),
            absl::StatusCode::kNotFound);
  absl::StatusOr<AgentToolResult> missing =
      CallAgentTool(backend, "compile_kernel", json::object(), "");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("kernel_code"));
  absl::StatusOr<AgentToolResult> wrong_type =
      CallAgentTool(backend, "run_correctness",
                    {{"kernel_code", "x"}, {"trials", "five"}}, "");
  EXPECT_EQ(wrong_type.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(wrong_type.status().message()), HasSubstr("trials"));
  absl::StatusOr<AgentToolResult> unknown_arg =
      CallAgentTool(backend, "get_gpu_specs", {{"gpu", 1}}, "");
  EXPECT_EQ(unknown_arg.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      CallAgentTool(backend, "get_problem", json::array(), "").status().code(),
      absl::StatusCode::kInvalidArgument);
  // Integers outside the schema's bounds, or past int32, never wrap.
  for (const json& trials : {json(4294967297ull), json(-1), json(0), json(101),
                             json(int64_t{1} << 40)}) {
    absl::StatusOr<AgentToolResult> r =
        CallAgentTool(backend, "run_correctness",
                      {{"kernel_code", "x"}, {"trials", trials}}, "");
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument)
        << trials.dump();
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("1 to 100"));
  }
  EXPECT_TRUE(CallAgentTool(backend, "run_correctness",
                            {{"kernel_code", "x"}, {"trials", 100}}, "")
                  .ok());
}

TEST(CallAgentToolTest, MapsArgumentsOntoTheRequest) {
  FakeBackend backend;
  absl::StatusOr<AgentToolResult> r = CallAgentTool(
      backend, "run_correctness",
      {{"kernel_code", "// src"}, {"shape_set", "odd"}, {"trials", 3}},
      "s-default");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(backend.last_kind, v1::JOB_KIND_CORRECTNESS);
  EXPECT_EQ(backend.last_request.source(), "// src");
  EXPECT_EQ(backend.last_request.shape_set(), "odd");
  EXPECT_EQ(backend.last_request.trials(), 3);
  EXPECT_EQ(backend.last_request.session_id(), "s-default");
  // An explicit session id wins over the client's.
  ASSERT_TRUE(CallAgentTool(backend, "submit_kernel",
                            {{"kernel_code", "x"}, {"session_id", "s-mine"}},
                            "s-default")
                  .ok());
  EXPECT_EQ(backend.last_kind, v1::JOB_KIND_SUBMIT);
  EXPECT_EQ(backend.last_request.session_id(), "s-mine");
}

TEST(CallAgentToolTest, HotL2IsABooleanOfTheTimedTools) {
  FakeBackend backend;
  ASSERT_TRUE(CallAgentTool(backend, "submit_kernel",
                            {{"kernel_code", "x"}, {"hot_l2", true}}, "")
                  .ok());
  EXPECT_TRUE(backend.last_request.hot_l2());
  ASSERT_TRUE(
      CallAgentTool(backend, "profile_kernel", {{"kernel_code", "x"}}, "")
          .ok());
  EXPECT_FALSE(backend.last_request.hot_l2());
  absl::StatusOr<AgentToolResult> wrong = CallAgentTool(
      backend, "submit_kernel", {{"kernel_code", "x"}, {"hot_l2", "yes"}}, "");
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(wrong.status().message()),
              HasSubstr("'hot_l2' must be a boolean"));
  // Only timed tools have it.
  EXPECT_EQ(CallAgentTool(backend, "run_correctness",
                          {{"kernel_code", "x"}, {"hot_l2", true}}, "")
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CallAgentToolTest, ProfilePresetIsAnEnumOfProfileKernel) {
  FakeBackend backend;
  ASSERT_TRUE(CallAgentTool(backend, "profile_kernel",
                            {{"kernel_code", "x"}, {"profile_preset", "fast"}},
                            "")
                  .ok());
  EXPECT_EQ(backend.last_request.profile_preset(), "fast");
  ASSERT_TRUE(
      CallAgentTool(backend, "profile_kernel", {{"kernel_code", "x"}}, "")
          .ok());
  EXPECT_EQ(backend.last_request.profile_preset(), "");  // kbd: full.
  absl::StatusOr<AgentToolResult> wrong =
      CallAgentTool(backend, "profile_kernel",
                    {{"kernel_code", "x"}, {"profile_preset", "quick"}}, "");
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(wrong.status().message()),
              HasSubstr("argument 'profile_preset' has \"quick\"; allowed: "
                        "[\"fast\",\"full\"]"));
  // Only profile_kernel has it.
  EXPECT_EQ(
      CallAgentTool(backend, "submit_kernel",
                    {{"kernel_code", "x"}, {"profile_preset", "fast"}}, "")
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
}

TEST(CallAgentToolTest, VerdictsAndRefusalsAreResultsWithIsError) {
  FakeBackend backend;
  absl::StatusOr<AgentToolResult> passed =
      CallAgentTool(backend, "compile_kernel", {{"kernel_code", "x"}}, "");
  ASSERT_TRUE(passed.ok());
  EXPECT_FALSE(passed->is_error);
  EXPECT_THAT(passed->text, StartsWith("VERDICT: passed (compile_kernel"));
  EXPECT_EQ(passed->structured["id"], "j-1");

  backend.verdict = v1::VERDICT_FAILED;
  absl::StatusOr<AgentToolResult> failed =
      CallAgentTool(backend, "run_correctness", {{"kernel_code", "x"}}, "");
  ASSERT_TRUE(failed.ok());
  EXPECT_TRUE(failed->is_error);
  EXPECT_THAT(failed->text, StartsWith("VERDICT: failed"));
  EXPECT_THAT(failed->text, HasSubstr("odd/b7"));

  backend.run_status = absl::InvalidArgumentError(
      "line 4: grid() takes 1 to 3 expressions, got 4");
  absl::StatusOr<AgentToolResult> refused =
      CallAgentTool(backend, "run_correctness", {{"kernel_code", "x"}}, "");
  ASSERT_TRUE(refused.ok());
  EXPECT_TRUE(refused->is_error);
  EXPECT_THAT(refused->text, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(refused->text, HasSubstr("line 4"));
  EXPECT_EQ(refused->structured["error"]["code"], "INVALID_ARGUMENT");

  backend.specs_status =
      absl::FailedPreconditionError("no GPU worker is connected");
  absl::StatusOr<AgentToolResult> no_gpu =
      CallAgentTool(backend, "get_gpu_specs", json::object(), "");
  ASSERT_TRUE(no_gpu.ok());
  EXPECT_TRUE(no_gpu->is_error);
  EXPECT_THAT(no_gpu->text, HasSubstr("no GPU worker"));
}

TEST(CallAgentToolTest, SpecsProblemAndCompareTexts) {
  FakeBackend backend;
  absl::StatusOr<AgentToolResult> specs =
      CallAgentTool(backend, "get_gpu_specs", json::object(), "s1");
  ASSERT_TRUE(specs.ok());
  EXPECT_THAT(specs->text, HasSubstr("NVIDIA H200"));
  EXPECT_THAT(specs->text, HasSubstr("4200 GB/s"));
  EXPECT_THAT(specs->text, HasSubstr("datasheet values (H200 SXM datasheet)"));
  EXPECT_EQ(backend.last_session, "s1");
  absl::StatusOr<AgentToolResult> problem =
      CallAgentTool(backend, "get_problem", json::object(), "");
  ASSERT_TRUE(problem.ok());
  EXPECT_THAT(problem->text, HasSubstr("SIGNATURE"));
  EXPECT_THAT(problem->text, HasSubstr("KERNEL CONTRACT"));
  absl::StatusOr<AgentToolResult> cmp = CallAgentTool(
      backend, "compare_runs", {{"turn_a", 1}, {"turn_b", 2}}, "s1");
  ASSERT_TRUE(cmp.ok());
  EXPECT_THAT(cmp->text, HasSubstr("+b"));
  EXPECT_EQ(cmp->structured["a"]["turn"], 1);
}

TEST(CallAgentToolTest, ListProblemsBySuite) {
  FakeBackend backend;
  absl::StatusOr<AgentToolResult> all =
      CallAgentTool(backend, "list_problems", {{"suite", "collectives"}}, "");
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_FALSE(all->is_error);
  EXPECT_EQ(all->text,
            "PROBLEMS: 1\n"
            "- gather_linear_fp32 — Virtual all-gather then linear (fp32) "
            "[collectives]\n"
            "suites: collectives\n");
  EXPECT_EQ(all->structured["problems"][0]["name"], "gather_linear_fp32");
  absl::StatusOr<AgentToolResult> unknown =
      CallAgentTool(backend, "list_problems", {{"suite", "nope"}}, "");
  ASSERT_TRUE(unknown.ok());
  EXPECT_TRUE(unknown->is_error);
  EXPECT_THAT(unknown->text, HasSubstr("NOT_FOUND: unknown suite 'nope'"));
  EXPECT_EQ(CallAgentTool(backend, "list_problems", {{"suite", 3}}, "")
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SanitizeToolTest, SchemaOffersTheThreeTools) {
  const AgentToolDef* def = FindAgentTool("sanitize_kernel");
  ASSERT_NE(def, nullptr);
  EXPECT_THAT(def->description, HasSubstr("memcheck"));
  EXPECT_THAT(def->description, HasSubstr("racecheck"));
  EXPECT_THAT(def->description, HasSubstr("initcheck"));
  EXPECT_THAT(def->description, HasSubstr("Slow"));
  const json& tools = def->input_schema["properties"]["tools"];
  EXPECT_EQ(tools["type"], "array");
  EXPECT_EQ(tools["items"]["enum"],
            json::array({"memcheck", "racecheck", "initcheck"}));
  EXPECT_EQ(def->input_schema["required"], json::array({"kernel_code"}));
  EXPECT_TRUE(def->input_schema["properties"].contains("shape_set"));
  EXPECT_FALSE(def->input_schema["properties"].contains("trials"));
}

TEST(SanitizeToolTest, MapsArgumentsOntoASanitizeJob) {
  FakeBackend backend;
  absl::StatusOr<AgentToolResult> r =
      CallAgentTool(backend, "sanitize_kernel",
                    {{"kernel_code", "k"},
                     {"problem", "gather_linear_bf16"},
                     {"shape_set", "odd"},
                     {"tools", {"racecheck", "memcheck"}}},
                    "s-1");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(backend.last_kind, v1::JOB_KIND_SANITIZE);
  EXPECT_EQ(backend.last_request.source(), "k");
  EXPECT_EQ(backend.last_request.problem(), "gather_linear_bf16");
  EXPECT_EQ(backend.last_request.shape_set(), "odd");
  EXPECT_EQ(backend.last_request.session_id(), "s-1");
  ASSERT_EQ(backend.last_request.sanitize_tools_size(), 2);
  EXPECT_EQ(backend.last_request.sanitize_tools(0), "racecheck");
  EXPECT_EQ(backend.last_request.sanitize_tools(1), "memcheck");
  EXPECT_THAT(r->text, StartsWith("VERDICT: passed (sanitize_kernel"));

  ASSERT_TRUE(
      CallAgentTool(backend, "sanitize_kernel", {{"kernel_code", "k"}}, "")
          .ok());
  EXPECT_EQ(backend.last_request.sanitize_tools_size(), 0);  // All three.
}

TEST(SanitizeToolTest, BadToolNamesAreInvalidArguments) {
  FakeBackend backend;
  absl::StatusOr<AgentToolResult> r =
      CallAgentTool(backend, "sanitize_kernel",
                    {{"kernel_code", "k"}, {"tools", {"synccheck"}}}, "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("synccheck"));
  EXPECT_THAT(r.status().message(), HasSubstr("memcheck"));
  r = CallAgentTool(backend, "sanitize_kernel",
                    {{"kernel_code", "k"}, {"tools", "memcheck"}}, "");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("must be an array"));
  EXPECT_EQ(backend.last_kind, v1::JOB_KIND_UNSPECIFIED);  // Never ran.
}

TEST(SanitizeToolTest, FindingsAreInTheText) {
  v1::Job job;
  job.set_id("j-9");
  job.set_kind(v1::JOB_KIND_SANITIZE);
  job.set_problem("gather_linear_fp32");
  job.set_filename("kernel.cu");
  v1::JobResult* r = job.mutable_result();
  r->set_verdict(v1::VERDICT_FAILED);
  r->set_message("memcheck: Invalid __global__ write of size 4 bytes");
  v1::SanitizeReport* s = r->mutable_sanitize();
  s->set_shape_set("default");
  s->set_shape("orig");
  v1::SanitizeToolRun* run = s->add_runs();
  run->set_tool("memcheck");
  run->set_findings(1);
  run->set_wall_ms(2500);
  v1::SanitizeFinding* f = s->add_findings();
  f->set_tool("memcheck");
  f->set_kind("Invalid __global__ write of size 4 bytes");
  f->set_kernel("gather_linear");
  f->set_file("kernel.cu");
  f->set_line(17);
  f->set_source_line("out[b * K + k] = acc;");
  f->set_thread("(31,0,0)");
  f->set_block("(3,0,0)");
  f->set_address("Address 0x7f00 is out of bounds");
  f->set_count(12);
  const std::string text = AgentJobText(job);
  EXPECT_THAT(text, StartsWith("VERDICT: failed (sanitize_kernel"));
  EXPECT_THAT(text, HasSubstr("sanitize (default/orig, 1 trial): memcheck 1 "
                              "finding(s) in 2.5 s"));
  EXPECT_THAT(text, HasSubstr("finding 1 [memcheck]: Invalid __global__ write "
                              "of size 4 bytes (x12)"));
  EXPECT_THAT(text, HasSubstr("at kernel.cu:17 in gather_linear: out[b * K + "
                              "k] = acc;"));
  EXPECT_THAT(text, HasSubstr("thread (31,0,0); block (3,0,0); Address 0x7f00 "
                              "is out of bounds"));
  s->clear_findings();
  EXPECT_THAT(AgentSanitizeText(*s, "kernel.cu"), HasSubstr("no findings"));
  EXPECT_EQ(AgentSanitizeText(v1::SanitizeReport(), "kernel.cu"), "");
}

}  // namespace
}  // namespace kbench
