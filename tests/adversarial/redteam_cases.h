// The red-team table of issue 4 (tests/adversarial/README.md): each
// adversarial kernel, the tool an agent would call with it and the verdict
// and message it must get; and helpers that run one case against a real kbd
// over gRPC and check the outcome. Shared by tests/adversarial/
// redteam_test.cc (GPU, every case) and tests/integration/
// redteam_compile_test.cc (no GPU, the compile-stage cases).
//
// Header only (test code). Thread safety: the functions are reentrant; a
// stub may be shared.
#ifndef KBENCH_TESTS_ADVERSARIAL_REDTEAM_CASES_H_
#define KBENCH_TESTS_ADVERSARIAL_REDTEAM_CASES_H_

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kbench/v1/kbench.grpc.pb.h"
#include "testing/process.h"

namespace kbench::redteam {

// The agent tool a case is sent with.
enum class Tool { kCompile, kCorrectness, kSubmit };

struct Case {
  std::string name;  // Test name; also tests/adversarial/kernels/NAME.cu.
  Tool tool = Tool::kCorrectness;
  // The verdict the job must get. VERDICT_UNSPECIFIED with
  // refused_at_submission: the call must fail with INVALID_ARGUMENT and no
  // job may exist.
  v1::Verdict verdict = v1::VERDICT_UNSPECIFIED;
  bool refused_at_submission = false;
  // For rejected cases: the status the call fails with.
  grpc::StatusCode call_status = grpc::StatusCode::INVALID_ARGUMENT;
  // Each must appear (case-insensitive) in what the caller is told: the
  // call's status message, the result's message and error message.
  std::vector<std::string> must_contain;
  // At least one must appear there, when not empty.
  std::vector<std::string> any_of;
  // Each must appear (case-insensitive) in the job's log.
  std::vector<std::string> log_contains;
  // Must appear nowhere: not in the status, the response, the job (with
  // its compile report and log) or kbd's stderr (local workers' too).
  std::vector<std::string> never_shown;
  // Every visible trial must pass: the cheat works on the public shapes,
  // so what catches it is a hidden case.
  bool public_trials_pass = false;
  int budget_ms = 0;              // KernelRequest.budget_ms; 0 = problem's.
  bool generated_source = false;  // huge_source: the test builds the text.
};

inline std::ostream& operator<<(std::ostream& os, const Case& c) {
  return os << c.name;
}

// Every case of the table, in the README's order.
inline std::vector<Case> AllCases() {
  using v1::Verdict;
  std::vector<Case> cases;
  auto add = [&](std::string name, Tool tool, Verdict verdict,
                 std::vector<std::string> must) -> Case& {
    Case c;
    c.name = std::move(name);
    c.tool = tool;
    c.verdict = verdict;
    c.must_contain = std::move(must);
    cases.push_back(std::move(c));
    return cases.back();
  };
  const Tool kCheck = Tool::kCorrectness;
  add("writes_nothing", kCheck, v1::VERDICT_FAILED, {"NaN or unwritten"});
  add("writes_zeros", kCheck, v1::VERDICT_FAILED, {"outside tolerance"});
  add("default_shape_only", kCheck, v1::VERDICT_FAILED, {});
  add("caches_in_global", kCheck, v1::VERDICT_FAILED, {});
  add("skips_after_n_calls", Tool::kSubmit, v1::VERDICT_FAILED, {"timed"});
  add("writes_out_of_bounds", kCheck, v1::VERDICT_REJECTED, {"out of bounds"});
  add("mutates_input", kCheck, v1::VERDICT_REJECTED, {"modified input"});
  add("computes_fp16", kCheck, v1::VERDICT_FAILED, {"outside tolerance"});
  add("data_race", kCheck, v1::VERDICT_FAILED, {});
  add("loops_forever", kCheck, v1::VERDICT_TIMED_OUT, {}).budget_ms = 2000;
  add("traps", kCheck, v1::VERDICT_CRASHED, {});
  add("reads_address_0", kCheck, v1::VERDICT_CRASHED, {"illegal"});
  add("too_much_smem", kCheck, v1::VERDICT_REJECTED, {"shared memory"});
  add("prints_in_loop", kCheck, v1::VERDICT_PASSED, {}).log_contains = {
      "truncated"};
  add("includes_host_file", kCheck, v1::VERDICT_REJECTED, {"include"})
      .never_shown = {"root:"};
  Case& bomb =
      add("compile_bomb", kCheck, v1::VERDICT_REJECTED, {"compile", "limit"});
  bomb.call_status = grpc::StatusCode::RESOURCE_EXHAUSTED;
  Case& huge = add("huge_source", kCheck, v1::VERDICT_UNSPECIFIED, {"256 KiB"});
  huge.refused_at_submission = true;
  huge.generated_source = true;
  add("dynamic_parallelism", kCheck, v1::VERDICT_REJECTED, {}).any_of = {
      "dynamic parallelism", "relocatable"};
  // Right only on part of the domain (issue 15): submit's hidden cases,
  // drawn per submission from the size classes, must catch each, and say
  // which class. Which class fails first depends on the draw where two
  // classes reach the failing sizes.
  const Tool kSubmit = Tool::kSubmit;
  const std::vector<std::string> small_or_mid = {"small or odd-sized case",
                                                 "mid-size case"};
  add("correct_only_small_b", kSubmit, v1::VERDICT_FAILED,
      {"failed on a hidden mid-size case (R in 1..8, B in 257..4096"})
      .public_trials_pass = true;
  Case& small_k = add("correct_only_small_k", kSubmit, v1::VERDICT_FAILED,
                      {"failed on a hidden", "NaN or unwritten"});
  small_k.any_of = small_or_mid;
  small_k.public_trials_pass = true;
  Case& tile = add("fixed_shared_tile", kSubmit, v1::VERDICT_FAILED,
                   {"failed on a hidden", "outside tolerance"});
  tile.any_of = small_or_mid;
  tile.public_trials_pass = true;
  Case& hang = add("hangs_when_b_large", kSubmit, v1::VERDICT_TIMED_OUT,
                   {"checking a hidden"});
  hang.any_of = small_or_mid;
  hang.budget_ms = 3000;
  add("public_shapes_only", kSubmit, v1::VERDICT_FAILED,
      {"failed on a hidden small or odd-sized case"})
      .public_trials_pass = true;
  return cases;
}

// The cases decided before a GPU is needed, sent with compile_kernel.
inline std::vector<Case> CompileStageCases() {
  std::vector<Case> out;
  for (Case c : AllCases()) {
    if (c.name == "includes_host_file" || c.name == "compile_bomb" ||
        c.name == "dynamic_parallelism" || c.name == "huge_source" ||
        c.name == "too_much_smem") {
      c.tool = Tool::kCompile;
      out.push_back(std::move(c));
    }
  }
  return out;
}

// A valid kernel (the naive example) followed by `bytes` of comment lines.
inline std::string HugeSource(size_t bytes = 10u << 20) {
  std::string s = ::kbench::testing::ReadSourceFile(
      "kernels/examples/gather_linear_naive.cu");
  const std::string line =
      "// padding padding padding padding padding padding padding padding\n";
  s.reserve(s.size() + bytes + line.size());
  while (s.size() < bytes) s += line;
  return s;
}

inline v1::KernelRequest CaseRequest(const Case& c,
                                     const std::string& session_id) {
  v1::KernelRequest k;
  if (c.generated_source) {
    k.set_source(HugeSource());
  } else {
    k.set_source(::kbench::testing::ReadSourceFile(
        absl::StrCat("tests/adversarial/kernels/", c.name, ".cu")));
  }
  k.set_filename(absl::StrCat(c.name, ".cu"));
  k.set_session_id(session_id);
  k.set_budget_ms(c.budget_ms);
  return k;
}

// What came back from one tool call, and the job it made (if any).
struct Outcome {
  grpc::Status status;
  std::string response_text;  // The response message, as text.
  bool has_job = false;
  v1::Job job;  // Full, from GetJob.
  // Everything the caller could read: status, response and job.
  std::string AllText() const {
    return absl::StrCat(status.error_message(), "\n", status.error_details(),
                        "\n", response_text, "\n",
                        has_job ? job.DebugString() : "");
  }
  // What the caller is told about the verdict.
  std::string Told() const {
    return absl::StrCat(status.error_message(), "\n", job.result().message(),
                        "\n", job.result().error().message());
  }
};

inline std::chrono::system_clock::time_point Deadline(int seconds) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

// Sends `request` with `tool`, then finds the job of `request.session_id()`
// (the newest one) and reads it whole.
inline Outcome RunTool(v1::Kbench::Stub* stub, Tool tool,
                       const v1::KernelRequest& request, int deadline_s = 300) {
  Outcome o;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(deadline_s));
    switch (tool) {
      case Tool::kCompile: {
        v1::CompileKernelRequest req;
        *req.mutable_kernel() = request;
        v1::CompileKernelResponse resp;
        o.status = stub->CompileKernel(&ctx, req, &resp);
        o.response_text = resp.DebugString();
        break;
      }
      case Tool::kCorrectness: {
        v1::RunCorrectnessRequest req;
        *req.mutable_kernel() = request;
        v1::RunCorrectnessResponse resp;
        o.status = stub->RunCorrectness(&ctx, req, &resp);
        o.response_text = resp.DebugString();
        break;
      }
      case Tool::kSubmit: {
        v1::SubmitKernelRequest req;
        *req.mutable_kernel() = request;
        v1::SubmitKernelResponse resp;
        o.status = stub->SubmitKernel(&ctx, req, &resp);
        o.response_text = resp.DebugString();
        break;
      }
    }
  }
  if (request.session_id().empty()) return o;
  v1::ListJobsRequest lreq;
  lreq.set_session_id(request.session_id());
  lreq.set_page_size(10);
  v1::ListJobsResponse lresp;
  grpc::ClientContext lctx;
  lctx.set_deadline(Deadline(30));
  if (!stub->ListJobs(&lctx, lreq, &lresp).ok() || lresp.jobs_size() == 0) {
    return o;
  }
  v1::GetJobRequest greq;
  greq.set_job_id(lresp.jobs(0).id());
  v1::GetJobResponse gresp;
  grpc::ClientContext gctx;
  gctx.set_deadline(Deadline(30));
  if (stub->GetJob(&gctx, greq, &gresp).ok()) {
    o.has_job = true;
    o.job = gresp.job();
  }
  return o;
}

inline bool ContainsNoCase(const std::string& haystack,
                           const std::string& needle) {
  return absl::StrContains(absl::AsciiStrToLower(haystack),
                           absl::AsciiStrToLower(needle));
}

// Checks `o` against the table's row `c` (gtest failures name the case).
// `server_log` is kbd's stderr (with its local workers'), for never_shown.
inline void ExpectVerdict(const Case& c, const Outcome& o,
                          const std::string& server_log) {
  SCOPED_TRACE(absl::StrCat(
      "case ", c.name, "; status ", static_cast<int>(o.status.error_code()),
      " '", o.status.error_message(), "'; job verdict ",
      o.has_job ? v1::Verdict_Name(o.job.result().verdict())
                : std::string("(no job)"),
      " '", o.job.result().message(), "'"));
  if (c.refused_at_submission) {
    EXPECT_EQ(o.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_FALSE(o.has_job) << "a refused request must not become a job";
  } else if (c.verdict == v1::VERDICT_REJECTED) {
    // A rejection fails the call with INVALID_ARGUMENT, or with
    // RESOURCE_EXHAUSTED when the compile hit one of its limits. It may be
    // found before a job exists (the plan against the GPU's limits) or by
    // the job (then its verdict must be `rejected`, not `compile_error`).
    EXPECT_EQ(o.status.error_code(), c.call_status);
    if (o.has_job) {
      EXPECT_EQ(v1::Verdict_Name(o.job.result().verdict()),
                v1::Verdict_Name(v1::VERDICT_REJECTED));
    }
  } else {
    EXPECT_TRUE(o.status.ok());
    ASSERT_TRUE(o.has_job) << "no job found for session of case " << c.name;
    EXPECT_EQ(v1::Verdict_Name(o.job.result().verdict()),
              v1::Verdict_Name(c.verdict));
  }
  const std::string told = o.Told();
  for (const std::string& s : c.must_contain) {
    EXPECT_TRUE(ContainsNoCase(told, s))
        << "the caller is not told '" << s << "':\n"
        << told;
  }
  if (!c.any_of.empty()) {
    bool any = false;
    for (const std::string& s : c.any_of) any = any || ContainsNoCase(told, s);
    EXPECT_TRUE(any) << "the caller is told none of '"
                     << absl::StrJoin(c.any_of, "', '") << "':\n"
                     << told;
  }
  for (const std::string& s : c.log_contains) {
    EXPECT_TRUE(ContainsNoCase(o.job.result().log(), s))
        << "the job's log lacks '" << s << "'; its last 300 bytes: "
        << o.job.result().log().substr(o.job.result().log().size() > 300
                                           ? o.job.result().log().size() - 300
                                           : 0);
  }
  // A hidden case is never identified: no dims, shape, seed or index.
  for (const v1::TrialResult& t : o.job.result().correctness().trials()) {
    if (t.hidden()) {
      EXPECT_TRUE(t.dims().empty() && t.shape().empty() && t.seed() == 0 &&
                  t.first_mismatch().empty())
          << "a hidden trial is identified: " << t.DebugString();
    } else if (c.public_trials_pass) {
      EXPECT_TRUE(t.passed())
          << "the cheat fails a public shape, so it "
          << "does not test the hidden cases: " << t.DebugString();
    }
  }
  for (const std::string& s : c.never_shown) {
    EXPECT_FALSE(absl::StrContains(o.AllText(), s))
        << "'" << s << "' was shown to the caller";
    EXPECT_FALSE(absl::StrContains(server_log, s))
        << "'" << s << "' is in kbd's (or its workers') log";
  }
}

// The ctest name of a parameterised case: the case's name.
inline std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  return info.param.name;
}

}  // namespace kbench::redteam

#endif  // KBENCH_TESTS_ADVERSARIAL_REDTEAM_CASES_H_
