// Shared builders of the report text tests: compile reports, trials,
// timing reports and a passed submit job with fixed, readable figures.
#ifndef KBENCH_REPORT_REPORT_FIXTURES_H_
#define KBENCH_REPORT_REPORT_FIXTURES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "kbench/v1/kbench.pb.h"
#include "kbench/v1/report.pb.h"

namespace kbench {
namespace report_fixtures {

// 2024-05-01T12:00:00Z.
inline constexpr int64_t kCreatedMs = 1714564800000;

inline std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n');
}

inline v1::CompileReport OkCompile() {
  v1::CompileReport c;
  c.set_success(true);
  c.set_arch("sm_90");
  c.set_compile_ms(52.2);
  c.set_cached(true);
  v1::KernelResources* k = c.add_kernels();
  k->set_name("gather_linear");
  k->set_registers(28);
  v1::LaunchSpec* l = c.mutable_plan()->add_launches();
  l->set_entry("gather_linear");
  l->add_grid("B");
  l->add_grid("cdiv(K, 256)");
  l->add_block("256");
  return c;
}

inline v1::CompileReport FailedCompile() {
  v1::CompileReport c;
  c.set_success(false);
  c.set_arch("sm_90");
  for (int line : {12, 14, 20}) {
    v1::Diagnostic* d = c.add_diagnostics();
    d->set_line(line);
    d->set_severity("error");
    d->set_message(line == 12 ? "identifier \"acc\" is undefined"
                              : "expected a \";\"");
  }
  c.set_log("kernel.cu(12): error: identifier \"acc\" is undefined\n...");
  return c;
}

inline v1::TrialResult Trial(const std::string& shape, uint64_t seed,
                             bool passed) {
  v1::TrialResult t;
  t.set_shape_set(shape == "orig" ? "default" : "odd");
  t.set_shape(shape);
  (*t.mutable_dims())["R"] = 4;
  (*t.mutable_dims())["B"] = 12;
  (*t.mutable_dims())["H"] = 32;
  (*t.mutable_dims())["K"] = 56;
  t.set_seed(seed);
  t.set_passed(passed);
  t.set_max_abs_error(passed ? 1.19e-7 : 0.5);
  t.set_max_rel_error(passed ? 3.4e-6 : 0.25);
  t.set_rel_norm_error(passed ? 2.1e-8 : 0.031);
  t.set_mismatches(passed ? 0 : 12);
  t.set_elements(672);
  if (!passed) t.set_first_mismatch("b=3 k=17");
  return t;
}

inline v1::TimingReport Timing(double speedup) {
  v1::TimingReport t;
  t.set_shape_set("default");
  t.set_shape("orig");
  (*t.mutable_dims())["B"] = 12;
  v1::Stats* k = t.mutable_kernel();
  k->set_median_us(12.3);
  k->set_mean_us(12.5);
  k->set_std_us(0.2);
  k->set_min_us(12.1);
  k->set_n(200);
  v1::Stats* r = t.mutable_reference();
  r->set_median_us(12.3 * speedup);
  r->set_mean_us(12.4 * speedup);
  r->set_std_us(0.3);
  r->set_min_us(12.0 * speedup);
  r->set_n(200);
  t.set_speedup(speedup);
  t.set_kernel_launches(1);
  t.set_reference_launches(2);
  t.set_reference_name("concat + cuBLASLt GEMM with bias");
  t.set_l2_flushed(true);
  t.set_stop_reason("relative standard error below 1%");
  return t;
}

inline v1::Job PassedSubmitJob() {
  v1::Job job;
  job.set_id("j-0001");
  job.set_kind(v1::JOB_KIND_SUBMIT);
  job.set_stage(v1::STAGE_DONE);
  job.set_problem("gather_linear_fp32");
  job.set_shape_set("default");
  job.set_filename("naive.cu");
  job.set_created_unix_ms(kCreatedMs);
  job.set_finished_unix_ms(kCreatedMs + 1500);
  job.set_worker_id("w-1");
  v1::JobResult* r = job.mutable_result();
  r->set_verdict(v1::VERDICT_PASSED);
  *r->mutable_compile() = OkCompile();
  v1::CorrectnessReport* c = r->mutable_correctness();
  c->set_passed(true);
  c->set_trials_run(2);
  c->set_trials_passed(2);
  c->mutable_tolerance()->set_atol(1e-3);
  c->mutable_tolerance()->set_rtol(1e-3);
  c->mutable_tolerance()->set_max_rel_norm(1e-5);
  *c->add_trials() = Trial("orig", 1234567, true);
  *c->add_trials() = Trial("orig", 7654321, true);
  *r->mutable_timing() = Timing(3.41);
  r->mutable_gpu()->set_name("NVIDIA H200");
  r->mutable_gpu()->set_arch("sm_90");
  r->set_worker_id("w-1");
  return job;
}

}  // namespace report_fixtures
}  // namespace kbench

#endif  // KBENCH_REPORT_REPORT_FIXTURES_H_
