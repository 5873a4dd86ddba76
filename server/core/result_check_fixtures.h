// Results as an honest runner makes them, for the tests of
// CheckWorkerResult (server/core/result_check.h): a job of each kind and
// its passing result on a fake GPU.
#ifndef KBENCH_SERVER_CORE_RESULT_CHECK_FIXTURES_H_
#define KBENCH_SERVER_CORE_RESULT_CHECK_FIXTURES_H_

#include <string>

#include "base/digest.h"
#include "kbench/v1/kbench.pb.h"
#include "kbench/v1/report.pb.h"
#include "kbench/v1/worker.pb.h"
#include "testing/fake_results.h"

namespace kbench {
namespace result_check_fixtures {

inline v1::GpuSpec Gpu() {
  v1::GpuSpec g;
  g.set_name("kbench fake GPU (tests only)");
  g.set_uuid("GPU-00000000-0000-0000-0000-000000000000");
  g.set_arch("sm_90");
  g.set_sm_count(132);
  g.set_max_threads_per_block(1024);
  return g;
}

inline v1::RunnerJob Job(v1::JobKind kind) {
  v1::RunnerJob job;
  job.set_job_id("j-1");
  job.set_kind(kind);
  job.set_source("extern \"C\" __global__ void k() {}");
  job.set_cubin_arch("sm_90");
  job.set_seed(42);
  for (const char* set : {"default", "odd"}) {
    v1::ShapeSet* s = job.add_check_sets();
    s->set_name(set);
    for (const char* shape : {"a", "b"}) s->add_shapes()->set_name(shape);
  }
  if (kind == v1::JOB_KIND_SUBMIT) {
    v1::ShapeSet* h = job.add_check_sets();
    h->set_name("holdout");
    h->set_hidden(true);
    h->add_shapes()->set_name("secret_shape");
  }
  job.set_timing_set("default");
  job.mutable_timing_shape()->set_name("a");
  return job;
}

// A steady timing around `median` us (the fake runner's).
inline v1::Stats Stats(double median) { return FakeStats(median); }

// What the fake runner sends for `job`: every shape passed and, for timed
// kinds, a kernel of 10 us against a 20 us reference.
inline v1::JobResult Honest(const v1::RunnerJob& job) {
  v1::JobResult r;
  r.set_verdict(v1::VERDICT_PASSED);
  *r.mutable_gpu() = Gpu();
  r.set_runner_ms(3.5);
  r.set_log("kb_fake_runner: fake result");
  r.mutable_manifest()->set_gpu_name(Gpu().name());
  r.mutable_manifest()->set_source_digest(Sha256Hex(job.source()));
  if (job.kind() == v1::JOB_KIND_SANITIZE) {
    v1::SanitizeToolRun* run = r.mutable_sanitize()->add_runs();
    run->set_tool("memcheck");
    return r;
  }
  v1::CorrectnessReport* c = r.mutable_correctness();
  for (const v1::ShapeSet& set : job.check_sets()) {
    for (const v1::Shape& shape : set.shapes()) {
      v1::TrialResult* t = c->add_trials();
      t->set_shape_set(set.name());
      t->set_shape(shape.name());
      t->set_hidden(set.hidden());
      t->set_passed(true);
      t->set_max_abs_error(1e-6);
      t->set_elements(100);
      t->set_kernel_ms(0.01);
    }
  }
  c->set_passed(true);
  c->set_trials_run(c->trials_size());
  c->set_trials_passed(c->trials_size());
  if (job.kind() == v1::JOB_KIND_SUBMIT || job.kind() == v1::JOB_KIND_PROFILE) {
    v1::TimingReport* t = r.mutable_timing();
    t->set_shape_set("default");
    t->set_shape("a");
    *t->mutable_kernel() = Stats(10);
    *t->mutable_reference() = Stats(20);
    t->set_speedup(2.0);
    t->set_wall_ms(1);
    t->set_flops(1e6);
    t->set_min_bytes(1e5);
  }
  if (job.kind() == v1::JOB_KIND_PROFILE) {
    v1::ProfileReport* p = r.mutable_profile();
    *p->mutable_total() = Stats(10);
    *p->mutable_timing() = r.timing();
    *p->add_launches()->mutable_time() = Stats(10);
  }
  return r;
}

}  // namespace result_check_fixtures
}  // namespace kbench

#endif  // KBENCH_SERVER_CORE_RESULT_CHECK_FIXTURES_H_
