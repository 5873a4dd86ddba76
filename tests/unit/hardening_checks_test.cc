// Host-side pieces of the runner's hardening: guard regions, input
// checksums, twice-run comparison, the tolerance sanity check, the time
// floor, clock throttling, hidden-case redaction and the manifest.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/guard_pattern.h"
#include "common/hidden_redact.h"
#include "common/report_text.h"
#include "common/repro_manifest.h"
#include "common/run_checks.h"
#include "kbench/v1/problem.pb.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::Tolerance Fp32Tol() {
  v1::Tolerance t;
  t.set_atol(1e-3);
  t.set_rtol(1e-3);
  t.set_max_rel_norm(1e-5);
  return t;
}

TEST(GuardPatternTest, IntactRegionsReportNothing) {
  const auto before = GuardPattern(false), after = GuardPattern(true);
  EXPECT_EQ(before.size(), kGuardBytes);
  EXPECT_NE(before, after);
  EXPECT_EQ(kGuardBytes % 256, 0u);
  EXPECT_EQ(CheckGuard(before, false).bytes, 0);
  EXPECT_EQ(DescribeGuardDamage("out", 224, before, after), "");
}

TEST(GuardPatternTest, NoAlignedWordIsZeroOrOne) {
  for (bool side : {false, true}) {
    const auto p = GuardPattern(side);
    for (size_t i = 0; i + 4 <= p.size(); i += 4) {
      uint32_t w;
      memcpy(&w, &p[i], 4);
      EXPECT_NE(w, 0u);
      EXPECT_NE(w, 0x3f800000u);
      EXPECT_NE(w, 0x7fc00000u);
    }
  }
}

TEST(GuardPatternTest, WritePastTheEndIsNamedWithBytesAndSide) {
  auto before = GuardPattern(false), after = GuardPattern(true);
  // Four floats past the end of `out` (224 bytes), written as 0.
  for (int i = 0; i < 16; ++i) after[i] = 0;
  const GuardDamage d = CheckGuard(after, true);
  EXPECT_EQ(d.bytes, 16);
  EXPECT_EQ(d.first, 0);
  EXPECT_EQ(d.last, 15);
  const std::string m = DescribeGuardDamage("out", 224, before, after);
  EXPECT_THAT(m, HasSubstr("out of bounds"));
  EXPECT_THAT(m, HasSubstr("'out'"));
  EXPECT_THAT(m, HasSubstr("16 bytes changed past its end"));
  EXPECT_THAT(m, HasSubstr("bytes 0..15 after its 224 bytes"));
  EXPECT_THAT(m, Not(HasSubstr("before its start")));
}

TEST(GuardPatternTest, WriteBeforeTheStartCountsBackwards) {
  auto before = GuardPattern(false), after = GuardPattern(true);
  before[kGuardBytes - 1] ^= 1;  // The byte just before the tensor.
  before[kGuardBytes - 8] ^= 1;
  const GuardDamage d = CheckGuard(before, false);
  EXPECT_EQ(d.bytes, 2);
  EXPECT_EQ(d.first, -1);
  EXPECT_EQ(d.last, -8);
  const std::string m = DescribeGuardDamage("x", 64, before, after);
  EXPECT_THAT(m, HasSubstr("2 bytes changed before its start (bytes 1..8"));
}

TEST(RunChecksTest, InputChecksumSeesOneBitFlip) {
  std::vector<float> x(1000, 0.5f);
  const uint64_t a = InputChecksum(x.data(), x.size() * 4);
  EXPECT_EQ(a, InputChecksum(x.data(), x.size() * 4));
  x[999] = std::nextafter(0.5f, 1.0f);
  const uint64_t b = InputChecksum(x.data(), x.size() * 4);
  EXPECT_NE(a, b);
  EXPECT_EQ(DescribeInputChange("x", a, a), "");
  const std::string m = DescribeInputChange("x", a, b);
  EXPECT_THAT(m, HasSubstr("modified input 'x'"));
  EXPECT_THAT(m, HasSubstr("read-only"));
}

TEST(RunChecksTest, CompareRunsAcceptsEqualAndReportsRaces) {
  OutputLayout layout{{2, 3}, {"b", "k"}};
  std::vector<double> a = {1, 2, 3, 4, 5, 6}, b = a;
  EXPECT_EQ(CompareRuns(a.data(), b.data(), 6, Fp32Tol(), layout, true), "");
  b[4] += 1e-7;  // Within tolerance (atomics reorder sums).
  EXPECT_EQ(CompareRuns(a.data(), b.data(), 6, Fp32Tol(), layout, true), "");
  b[4] = 7.5;
  b[5] = NAN;
  const std::string m =
      CompareRuns(a.data(), b.data(), 6, Fp32Tol(), layout, true);
  EXPECT_THAT(m, HasSubstr("the two runs of the same inputs differed"));
  EXPECT_THAT(m, HasSubstr("2 of 6 elements"));
  EXPECT_THAT(m, HasSubstr("max abs difference 2.5"));
  EXPECT_THAT(m, HasSubstr("1 written in one run only"));
  EXPECT_THAT(m, HasSubstr("first at b=1 k=1"));
  const std::string hidden =
      CompareRuns(a.data(), b.data(), 6, Fp32Tol(), layout, false);
  EXPECT_THAT(hidden, Not(HasSubstr("first at")));
}

TEST(RunChecksTest, SanityCheckPassesForAGoodToleranceAndWideInputs) {
  std::vector<double> golden;
  for (int i = 0; i < 100; ++i) golden.push_back((i % 7 - 3) * 0.37 + 0.01 * i);
  EXPECT_TRUE(SanityCheckTolerance(golden.data(), golden.size(), Fp32Tol(),
                                   "default/orig")
                  .ok());
}

TEST(RunChecksTest, SanityCheckCatchesALooseTolerance) {
  std::vector<double> golden(50, 0.0);
  for (int i = 0; i < 50; ++i) golden[i] = 1e-4 * (i % 3);
  // Tiny outputs under an elementwise atol, and a rel-norm bound of 2: a
  // zero output passes both. The rel-norm bound of 1e-5 alone catches it.
  v1::Tolerance weak = Fp32Tol();
  weak.set_max_rel_norm(2);
  EXPECT_TRUE(
      SanityCheckTolerance(golden.data(), golden.size(), Fp32Tol(), "odd/b7")
          .ok());
  absl::Status s =
      SanityCheckTolerance(golden.data(), golden.size(), weak, "odd/b7");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("the problem's check is too weak on shape odd/b7"));
  // A loose tolerance lets a zero output pass a constant golden.
  std::vector<double> flat(50, 3.0);
  v1::Tolerance loose;
  loose.set_atol(10);
  loose.set_rtol(0);
  loose.set_max_rel_norm(10);
  EXPECT_FALSE(SanityCheckTolerance(flat.data(), flat.size(), loose, "x").ok());
}

TEST(RunChecksTest, FloorUsesTheFasterOfMeasuredAndDatasheet) {
  v1::GpuSpec spec;
  EXPECT_EQ(PhysicalFloorUs(1e9, 1e9, spec), 0);
  spec.set_datasheet_memory_gbps(4800);
  spec.set_datasheet_fp32_tflops(67);
  spec.set_measured_copy_gbps(4000);
  // 4.8e9 bytes at 4800 GB/s = 1000 us; 6.7e10 FLOP at 67 TF = 1000 us.
  EXPECT_NEAR(PhysicalFloorUs(0, 4.8e9, spec), 1000, 1e-6);
  EXPECT_NEAR(PhysicalFloorUs(6.7e11, 4.8e9, spec), 10000, 1e-6);
  EXPECT_EQ(CheckTimeFloor(950, 1000), "");
  EXPECT_EQ(CheckTimeFloor(5, 0), "");
  EXPECT_THAT(CheckTimeFloor(800, 1000),
              HasSubstr("impossible: faster than the physical floor"));
}

TEST(RunChecksTest, ThrottleNote) {
  EXPECT_EQ(ThrottleNote(1980, 1975, 1980), "");
  EXPECT_EQ(ThrottleNote(0, 0, 1980), "");
  EXPECT_THAT(ThrottleNote(1980, 1500, 1980),
              HasSubstr("clock dropped from 1980 to 1500 MHz during timing: "
                        "results may be pessimistic"));
  EXPECT_THAT(ThrottleNote(1000, 990, 1980), HasSubstr("far below"));
}

TEST(HiddenRedactTest, HiddenTrialsLoseShapeSeedAndIndex) {
  v1::JobResult r;
  v1::CorrectnessReport* c = r.mutable_correctness();
  v1::TrialResult* visible = c->add_trials();
  visible->set_shape_set("odd");
  visible->set_shape("b7");
  visible->set_seed(7);
  visible->set_passed(true);
  v1::TrialResult* h = c->add_trials();
  h->set_hidden(true);
  h->set_shape_set("secret");
  h->set_shape("s13");
  (*h->mutable_dims())["B"] = 13;
  h->set_seed(1234);
  h->set_first_mismatch("b=3 k=4");
  h->set_mismatches(5);
  h->set_elements(100);
  h->set_max_abs_error(0.25);
  c->set_message("secret/s13 (seed 1234): 5 of 100 outputs outside tolerance");
  r.set_message(c->message());
  v1::TrialResult* unmarked = c->add_trials();  // A hidden set, unflagged.
  unmarked->set_shape_set("secret");
  unmarked->set_shape("s14");
  unmarked->set_seed(99);
  unmarked->set_passed(true);
  RedactHiddenCases({"secret", "s13"}, &r);
  EXPECT_TRUE(r.correctness().trials(2).hidden());
  EXPECT_EQ(r.correctness().trials(2).shape(), "");
  EXPECT_EQ(r.correctness().trials(2).seed(), 0u);
  const v1::TrialResult& t = r.correctness().trials(1);
  EXPECT_EQ(t.shape_set(), "hidden");
  EXPECT_EQ(t.shape(), "");
  EXPECT_TRUE(t.dims().empty());
  EXPECT_EQ(t.seed(), 0u);
  EXPECT_EQ(t.first_mismatch(), "");
  EXPECT_EQ(t.mismatches(), 5);
  EXPECT_DOUBLE_EQ(t.max_abs_error(), 0.25);
  EXPECT_EQ(r.correctness().trials(0).shape(), "b7");
  EXPECT_EQ(r.correctness().trials(0).seed(), 7u);
  EXPECT_THAT(r.message(), HasSubstr("failed on a hidden case: 5 of 100"));
  EXPECT_THAT(r.message(), Not(HasSubstr("secret")));
  EXPECT_THAT(r.message(), Not(HasSubstr("1234")));
  EXPECT_EQ(r.correctness().message(), r.message());
}

TEST(HiddenRedactTest, VisibleMessagesAreKept) {
  v1::JobResult r;
  r.set_message("odd/b7 (seed 3): 1 of 7 outputs outside tolerance");
  RedactHiddenCases({"secret"}, &r);
  EXPECT_EQ(r.message(), "odd/b7 (seed 3): 1 of 7 outputs outside tolerance");
  EXPECT_FALSE(r.has_correctness());
}

TEST(ReproManifestTest, DigestIsDeterministicAndSensitive) {
  v1::ShapeSet a;
  a.set_name("odd");
  v1::Shape* s = a.add_shapes();
  s->set_name("b7");
  (*s->mutable_dims())["R"] = 4;
  (*s->mutable_dims())["B"] = 7;
  (*s->mutable_dims())["H"] = 32;
  v1::ShapeSet b;
  b.set_name("odd");
  v1::Shape* t = b.add_shapes();
  t->set_name("b7");
  (*t->mutable_dims())["H"] = 32;
  (*t->mutable_dims())["B"] = 7;
  (*t->mutable_dims())["R"] = 4;
  EXPECT_EQ(ProtoDigest(a), ProtoDigest(b));
  EXPECT_EQ(ProtoDigest(a).size(), 64u);
  (*t->mutable_dims())["B"] = 8;
  EXPECT_NE(ProtoDigest(a), ProtoDigest(b));
}

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
  FillManifestGpu(spec, &m);
  m.set_measured_sm_clock_before_mhz(1980);
  m.set_measured_sm_clock_after_mhz(1970);
  m.add_compile_options("-arch=sm_90");
  m.add_compile_options("-O3");
  m.set_trials(5);
  m.set_hidden_trials(12);
  m.add_seeds(42);
  m.add_seeds(43);
  m.set_l2_flushed(true);
  m.set_stopping_criterion("rel stderr <= 0.5%");
  m.set_problem_digest(std::string(64, 'a'));
  (*m.mutable_shape_set_digests())["odd"] = std::string(64, 'b');
  const std::string text = ManifestText(m);
  for (const char* want :
       {"NVIDIA H200", "GPU-1234", "driver 13.0", "NVRTC 13.0", "sm_90",
        "max SM 1980 MHz", "memory 3201 MHz", "measured SM 1980 -> 1970 MHz",
        "-arch=sm_90 -O3", "5 trials/shape", "(+12 hidden)", "seeds 42",
        "cold L2", "rel stderr <= 0.5%", "problem aaaaaaaaaaaa",
        "odd bbbbbbbbbbbb"}) {
    EXPECT_THAT(text, HasSubstr(want));
  }
}

TEST(OutputCompareTest, NaNAndInfNeverPassAndTheNormBoundApplies) {
  v1::Tolerance huge;
  huge.set_atol(1e30);
  huge.set_rtol(1e30);
  huge.set_max_rel_norm(1e30);
  const std::vector<double> ref = {1, 2, 3};
  v1::TrialResult t;
  std::vector<double> out = {1, NAN, 3};
  CompareOutput(out.data(), ref.data(), 3, huge, OutputLayout{}, &t);
  EXPECT_FALSE(t.passed());
  EXPECT_EQ(t.nan_count(), 1);
  out = {1, INFINITY, 3};
  CompareOutput(out.data(), ref.data(), 3, huge, OutputLayout{}, &t);
  EXPECT_FALSE(t.passed());
  // Every element within atol, but the relative norm is too large.
  v1::Tolerance tol = Fp32Tol();
  tol.set_atol(0.5);
  out = {1.4, 2.4, 3.4};
  CompareOutput(out.data(), ref.data(), 3, tol, OutputLayout{}, &t);
  EXPECT_EQ(t.mismatches(), 0);
  EXPECT_FALSE(t.passed());
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
  tr->set_clock_note(ThrottleNote(1980, 1500, 1980));
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
