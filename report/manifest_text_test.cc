// The manifest's text, and the hardening figures of a job as the report
// shows them: hidden rows, the clock note, the floor and the manifest.
#include "report/manifest_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kbench/v1/kbench.pb.h"
#include "report/report_text.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ReproManifestTest, TextNamesEveryPart) {
  v1::GpuSpec spec;
  spec.set_name("NVIDIA H200");
  spec.set_uuid("GPU-1234");
  spec.set_driver_version("13.0");
  spec.set_runtime_version("13.0");
  spec.set_nvrtc_version("13.0");
  spec.set_sm_clock_mhz(1980);
  spec.set_memory_clock_mhz(3201);
  spec.set_arch("sm_90");
  v1::ReproManifest m;
  EXPECT_EQ(ManifestText(m), "");
  // What FillManifestGpu (runner/repro_manifest.cc) copies from the spec.
  m.set_gpu_name(spec.name());
  m.set_gpu_uuid(spec.uuid());
  m.set_driver_version(spec.driver_version());
  m.set_runtime_version(spec.runtime_version());
  m.set_nvrtc_version(spec.nvrtc_version());
  m.set_max_sm_clock_mhz(spec.sm_clock_mhz());
  m.set_max_memory_clock_mhz(spec.memory_clock_mhz());
  m.set_arch(spec.arch());
  m.set_measured_sm_clock_before_mhz(1980);
  m.set_measured_sm_clock_after_mhz(1970);
  m.add_compile_options("-arch=sm_90");
  m.add_compile_options("-O3");
  m.set_trials(5);
  m.set_hidden_trials(12);
  m.add_seeds(42);
  m.add_seeds(43);
  m.set_l2_flushed(true);
  m.set_stopping_criterion("median rel stderr <= 0.5%");
  m.set_problem_digest(std::string(64, 'a'));
  (*m.mutable_shape_set_digests())["odd"] = std::string(64, 'b');
  const std::string text = ManifestText(m);
  for (const char* want :
       {"NVIDIA H200", "GPU-1234", "driver 13.0", "NVRTC 13.0", "sm_90",
        "max SM 1980 MHz", "memory 3201 MHz", "measured SM 1980 -> 1970 MHz",
        "-arch=sm_90 -O3", "5 trials/shape", "(+12 hidden)", "seeds 42",
        "cold L2", "median rel stderr <= 0.5%", "problem aaaaaaaaaaaa",
        "odd bbbbbbbbbbbb"}) {
    EXPECT_THAT(text, HasSubstr(want));
  }
}

TEST(HardeningReportTextTest, HiddenRowsClockNoteFloorAndManifest) {
  v1::Job job;
  job.set_stage(v1::STAGE_DONE);
  job.set_kind(v1::JOB_KIND_SUBMIT);
  v1::JobResult* r = job.mutable_result();
  r->set_verdict(v1::VERDICT_FAILED);
  v1::CorrectnessReport* c = r->mutable_correctness();
  v1::TrialResult* t = c->add_trials();
  t->set_hidden(true);
  t->set_shape_set("hidden");
  t->set_mismatches(3);
  t->set_elements(99);
  c->set_trials_run(1);
  c->set_message("failed on a hidden case: 3 of 99 outputs outside tolerance");
  v1::TimingReport* tr = r->mutable_timing();
  tr->set_sm_clock_before_mhz(1980);
  tr->set_sm_clock_after_mhz(1500);
  tr->set_throttled(true);
  // The note ThrottleNote (runner/host/run_checks.h) writes.
  tr->set_clock_note(
      "clock dropped from 1980 to 1500 MHz during timing: results may be "
      "pessimistic");
  tr->set_floor_us(2.5);
  r->mutable_manifest()->set_gpu_name("NVIDIA H200");
  r->mutable_manifest()->set_problem_digest(std::string(64, 'c'));
  const std::string text = FormatJob(job);
  EXPECT_THAT(text, HasSubstr("(hidden case)"));
  EXPECT_THAT(text, HasSubstr("failed on a hidden case"));
  EXPECT_THAT(text, HasSubstr("SM clock: 1980 MHz before, 1500 MHz after "
                              "timing (THROTTLED)"));
  EXPECT_THAT(text, HasSubstr("clock dropped from 1980 to 1500 MHz"));
  EXPECT_THAT(text, HasSubstr("physical floor: 2.50 us"));
  EXPECT_THAT(text, HasSubstr("repro: NVIDIA H200"));
  EXPECT_THAT(text, HasSubstr("problem cccccccccccc"));
}

}  // namespace
}  // namespace kbench
