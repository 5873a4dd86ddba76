#include "server/core/result_check.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/digest.h"
#include "base/status_macros.h"
#include "contract/names.h"

namespace kbench {
namespace {

absl::Status Bad(absl::string_view what) {
  return absl::InvalidArgumentError(what);
}

bool Finite(double v) { return std::isfinite(v) && v >= 0; }

// a <= b, allowing for rounding in the worker's arithmetic.
bool AtMost(double a, double b) { return a <= b + 1e-9 * std::fabs(b); }

absl::Status Count(absl::string_view field, int n, int max) {
  if (n <= max) return absl::OkStatus();
  return Bad(absl::StrCat(field, " has ", n, " entries; at most ", max,
                          " are accepted"));
}

absl::Status Bytes(absl::string_view field, size_t n, size_t max) {
  if (n <= max) return absl::OkStatus();
  return Bad(
      absl::StrCat(field, " is ", n, " bytes; at most ", max, " are accepted"));
}

absl::Status CheckSizes(const v1::JobResult& r, const ResultLimits& l) {
  RETURN_IF_ERROR(Bytes("the result", r.ByteSizeLong(), l.max_result_bytes));
  RETURN_IF_ERROR(Bytes("log", r.log().size(), l.max_log_bytes));
  RETURN_IF_ERROR(Bytes("message", r.message().size(), l.max_message_bytes));
  RETURN_IF_ERROR(
      Bytes("error.message", r.error().message().size(), l.max_message_bytes));
  RETURN_IF_ERROR(Bytes("correctness.message", r.correctness().message().size(),
                        l.max_message_bytes));
  RETURN_IF_ERROR(
      Count("correctness.trials", r.correctness().trials_size(), l.max_trials));
  RETURN_IF_ERROR(
      Count("manifest.seeds", r.manifest().seeds_size(), l.max_trials));
  const std::pair<const char*, int> items[] = {
      {"compile.diagnostics", r.compile().diagnostics_size()},
      {"compile.kernels", r.compile().kernels_size()},
      {"profile.launches", r.profile().launches_size()},
      {"profile.reference_launches", r.profile().reference_launches_size()},
      {"profile.hot_lines", r.profile().hot_lines_size()},
      {"profile.hints", r.profile().hints_size()},
      {"profile.missing", r.profile().missing_size()},
      {"profile.deltas", r.profile().deltas_size()},
      {"sanitize.runs", r.sanitize().runs_size()},
      {"sanitize.findings", r.sanitize().findings_size()},
  };
  for (const auto& [field, n] : items) {
    RETURN_IF_ERROR(Count(field, n, l.max_items));
  }
  return absl::OkStatus();
}

// The stats of one side of a timing. With `measured`, the side must hold
// samples and a median above the physical floor.
absl::Status CheckStats(absl::string_view what, const v1::Stats& s,
                        bool measured, double floor_us) {
  if (!measured && s.n() == 0) return absl::OkStatus();
  if (s.n() <= 0) {
    return Bad(absl::StrCat(what, " has no samples (n = ", s.n(), ")"));
  }
  const std::pair<const char*, double> fields[] = {
      {"mean_us", s.mean_us()}, {"median_us", s.median_us()},
      {"std_us", s.std_us()},   {"min_us", s.min_us()},
      {"max_us", s.max_us()},   {"rel_stderr", s.rel_stderr()}};
  for (const auto& [name, v] : fields) {
    if (!Finite(v)) {
      return Bad(absl::StrCat(what, ".", name, " is ", v,
                              "; times are finite and not negative"));
    }
  }
  if (!AtMost(s.min_us(), s.median_us()) ||
      !AtMost(s.median_us(), s.max_us()) || !AtMost(s.min_us(), s.mean_us()) ||
      !AtMost(s.mean_us(), s.max_us())) {
    return Bad(absl::StrFormat(
        "%s is not ordered: min %g, median %g, mean %g, max %g us", what,
        s.min_us(), s.median_us(), s.mean_us(), s.max_us()));
  }
  if (measured && s.median_us() < floor_us) {
    return Bad(absl::StrFormat(
        "%s median %g us is below %g us, faster than any launch on a GPU", what,
        s.median_us(), floor_us));
  }
  return absl::OkStatus();
}

// The expert baseline's figures: only for a problem that declares one,
// under its name, and its ratio to the kernel on the speedup's basis (0
// where the expert was not timed on that basis).
absl::Status CheckExpert(absl::string_view what, const v1::TimingReport& t,
                         const v1::RunnerJob& job, const ResultLimits& l) {
  const bool any = t.has_expert() || t.has_expert_gpu() ||
                   t.has_expert_graph() || !t.expert_name().empty() ||
                   t.expert_launches() != 0 || t.speedup_vs_expert() != 0;
  if (!any) return absl::OkStatus();
  const v1::Problem& problem = job.problem();
  if (!problem.has_expert()) {
    return Bad(absl::StrCat(what, " has expert-baseline figures, and problem '",
                            problem.name(), "' declares no expert baseline"));
  }
  if (t.expert_name() != problem.expert().name()) {
    return Bad(absl::StrCat(what, ".expert_name is not the name of problem '",
                            problem.name(), "''s expert baseline"));
  }
  if (t.expert_launches() < 0 || t.expert_launches() > l.max_items) {
    return Bad(absl::StrCat(what, ".expert_launches is ", t.expert_launches(),
                            "; at most ", l.max_items));
  }
  RETURN_IF_ERROR(CheckStats(absl::StrCat(what, ".expert"), t.expert(),
                             /*measured=*/false, 0));
  if (t.expert().n() > 0 && t.expert().median_us() < l.min_time_us) {
    return Bad(absl::StrFormat(
        "%s.expert median %g us is below %g us, faster than any launch on a "
        "GPU",
        what, t.expert().median_us(), l.min_time_us));
  }
  const bool gpu = t.speedup_basis() == v1::TIMING_BASIS_GPU_TIME;
  const v1::Stats& expert = gpu ? t.expert_gpu() : t.expert();
  const v1::Stats& kernel = gpu ? t.kernel_gpu() : t.kernel();
  const double expected = expert.n() > 0 && kernel.median_us() > 0
                              ? expert.median_us() / kernel.median_us()
                              : 0;
  const double got = t.speedup_vs_expert();
  if (!std::isfinite(got) ||
      std::fabs(got - expected) > l.speedup_tolerance * expected) {
    return Bad(absl::StrFormat(
        "%s.speedup_vs_expert %g does not match its own times: expert "
        "median %g us / kernel median %g us = %g (%s)",
        what, got, expert.median_us(), kernel.median_us(), expected,
        gpu ? "GPU time" : "events"));
  }
  return absl::OkStatus();
}

// Each rank's own figures (a problem that spans GPUs): one entry per rank,
// in rank order, none for a one-GPU problem; a rank's median cannot exceed
// the joined one, which is of every sample's slowest rank (events) or of
// the span from the first rank's start to the last rank's end (GPU time).
absl::Status CheckRanks(absl::string_view what, const v1::TimingReport& t,
                        const v1::RunnerJob& job, bool measured,
                        const ResultLimits& l) {
  if (t.ranks().empty()) return absl::OkStatus();
  const int world = job.problem().world_size();
  if (world <= 1 || t.ranks_size() != world) {
    return Bad(absl::StrCat(what, ".ranks has ", t.ranks_size(),
                            " entries, but the job's problem spans ",
                            std::max(1, world), world > 1 ? " GPUs" : " GPU"));
  }
  for (int r = 0; r < world; ++r) {
    const v1::RankTiming& mine = t.ranks(r);
    const std::string at = absl::StrCat(what, ".ranks[", r, "]");
    if (mine.rank() != r) {
      return Bad(absl::StrCat(at, ".rank is ", mine.rank(), ", not ", r));
    }
    const std::tuple<const char*, const v1::Stats*, const v1::Stats*, bool>
        sides[] = {{".kernel", &mine.kernel(), &t.kernel(), measured},
                   {".reference", &mine.reference(), &t.reference(), measured},
                   {".kernel_gpu", &mine.kernel_gpu(), &t.kernel_gpu(), false},
                   {".reference_gpu", &mine.reference_gpu(), &t.reference_gpu(),
                    false}};
    for (const auto& [field, stats, joined, required] : sides) {
      const std::string name = absl::StrCat(at, field);
      RETURN_IF_ERROR(
          CheckStats(name, *stats, required, required ? l.min_time_us : 0));
      if (stats->n() > 0 && !AtMost(stats->median_us(), joined->median_us())) {
        return Bad(absl::StrFormat(
            "%s median %g us is above the joined median %g us, which spans "
            "every rank",
            name, stats->median_us(), joined->median_us()));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckTiming(absl::string_view what, const v1::TimingReport& t,
                         const v1::RunnerJob& job, bool passed,
                         const ResultLimits& l) {
  const bool measured = passed || t.kernel().n() > 0 || t.reference().n() > 0;
  RETURN_IF_ERROR(CheckStats(absl::StrCat(what, ".kernel"), t.kernel(),
                             measured, l.min_time_us));
  RETURN_IF_ERROR(CheckStats(absl::StrCat(what, ".reference"), t.reference(),
                             measured, l.min_time_us));
  // CUPTI's GPU time and graph replays have no launch overhead: no floor,
  // but real numbers.
  const std::pair<const char*, const v1::Stats*> no_floor[] = {
      {".kernel_gpu", &t.kernel_gpu()},
      {".reference_gpu", &t.reference_gpu()},
      {".kernel_graph", &t.kernel_graph()},
      {".reference_graph", &t.reference_graph()},
      {".expert_gpu", &t.expert_gpu()},
      {".expert_graph", &t.expert_graph()}};
  for (const auto& [field, stats] : no_floor) {
    RETURN_IF_ERROR(CheckStats(absl::StrCat(what, field), *stats, false, 0));
  }
  const std::pair<const char*, double> figures[] = {
      {"wall_ms", t.wall_ms()},
      {"flops", t.flops()},
      {"min_bytes", t.min_bytes()},
      {"floor_us", t.floor_us()},
      {"sm_clock_before_mhz", t.sm_clock_before_mhz()},
      {"sm_clock_after_mhz", t.sm_clock_after_mhz()}};
  for (const auto& [name, v] : figures) {
    if (!Finite(v)) {
      return Bad(absl::StrCat(what, ".", name, " is ", v,
                              "; it must be finite and not negative"));
    }
  }
  RETURN_IF_ERROR(CheckExpert(what, t, job, l));
  RETURN_IF_ERROR(CheckRanks(what, t, job, measured, l));
  if (!measured) return absl::OkStatus();
  // The speedup divides the medians of the basis it names.
  const bool gpu = t.speedup_basis() == v1::TIMING_BASIS_GPU_TIME;
  if (!gpu && t.speedup_basis() != v1::TIMING_BASIS_EVENTS &&
      t.speedup_basis() != v1::TIMING_BASIS_UNSPECIFIED) {
    return Bad(absl::StrCat(what, ".speedup_basis ",
                            static_cast<int>(t.speedup_basis()),
                            " is not events or GPU time"));
  }
  const v1::Stats& ref = gpu ? t.reference_gpu() : t.reference();
  const v1::Stats& ker = gpu ? t.kernel_gpu() : t.kernel();
  const double expected = ker.median_us() > 0
                              ? ref.median_us() / ker.median_us()
                              : std::numeric_limits<double>::quiet_NaN();
  if (!std::isfinite(t.speedup()) || !std::isfinite(expected) ||
      std::fabs(t.speedup() - expected) > l.speedup_tolerance * expected) {
    return Bad(absl::StrFormat(
        "%s.speedup %g does not match its own times: reference median %g us "
        "/ kernel median %g us = %g (%s)",
        what, t.speedup(), ref.median_us(), ker.median_us(), expected,
        gpu ? "GPU time" : "events"));
  }
  const std::pair<const char*, double> speedups[] = {
      {"speedup_events", t.speedup_events()},
      {"speedup_gpu", t.speedup_gpu()},
      {"speedup_graph", t.speedup_graph()}};
  for (const auto& [name, v] : speedups) {
    if (!Finite(v)) {
      return Bad(absl::StrCat(what, ".", name, " is ", v,
                              "; it must be finite and not negative"));
    }
  }
  if (passed && (t.shape_set() != job.timing_set() ||
                 t.shape() != job.timing_shape().name())) {
    return Bad(absl::StrCat(what,
                            " is not of the shape the job timed (the timing "
                            "report names another shape set or shape)"));
  }
  return absl::OkStatus();
}

// A trial as named in messages; hidden cases stay unnamed.
std::string TrialName(const v1::TrialResult& t, int index,
                      const std::set<std::string>& hidden_sets) {
  if (t.hidden() || hidden_sets.count(t.shape_set()) > 0) {
    return absl::StrCat("trial ", index + 1, " (a hidden case)");
  }
  return absl::StrCat("trial ", index + 1, " (", t.shape_set(), "/", t.shape(),
                      ")");
}

absl::Status CheckCorrectness(const v1::RunnerJob& job,
                              const v1::CorrectnessReport& c, bool passed) {
  std::set<std::string> hidden_sets;
  std::set<std::pair<std::string, std::string>> shapes;
  for (const v1::ShapeSet& set : job.check_sets()) {
    if (set.hidden()) hidden_sets.insert(set.name());
    for (const v1::Shape& shape : set.shapes()) {
      shapes.emplace(set.name(), shape.name());
    }
  }
  std::set<std::pair<std::string, std::string>> seen;
  int n_passed = 0;
  for (int i = 0; i < c.trials_size(); ++i) {
    const v1::TrialResult& t = c.trials(i);
    const std::string name = TrialName(t, i, hidden_sets);
    if (shapes.count({t.shape_set(), t.shape()}) == 0) {
      return Bad(absl::StrCat(name, " is of a shape the job does not have"));
    }
    seen.emplace(t.shape_set(), t.shape());
    if (!std::isfinite(t.kernel_ms()) || t.kernel_ms() < 0) {
      return Bad(absl::StrCat(name, " has kernel_ms ", t.kernel_ms()));
    }
    if (!t.passed()) continue;
    ++n_passed;
    if (t.mismatches() != 0 || t.nan_count() != 0 ||
        !Finite(t.max_abs_error()) || !Finite(t.max_rel_error()) ||
        !Finite(t.rel_norm_error())) {
      return Bad(absl::StrFormat(
          "%s is marked passed with %d mismatches, %d NaN, max abs error %g",
          name, t.mismatches(), t.nan_count(), t.max_abs_error()));
    }
  }
  if (c.passed() && n_passed != c.trials_size()) {
    return Bad(absl::StrCat("correctness.passed is true but ",
                            c.trials_size() - n_passed, " of ", c.trials_size(),
                            " trials failed"));
  }
  if (!passed) return absl::OkStatus();
  if (!c.passed()) {
    return Bad("verdict PASSED but correctness.passed is false");
  }
  if (c.trials_size() == 0) return Bad("verdict PASSED with no trials");
  if (c.trials_run() != c.trials_size() || c.trials_passed() != n_passed) {
    return Bad(absl::StrCat(
        "verdict PASSED but the counts disagree: ", c.trials_run(), " run and ",
        c.trials_passed(), " passed, ", c.trials_size(), " trials listed"));
  }
  if (seen.size() != shapes.size()) {
    return Bad(absl::StrCat("verdict PASSED but only ", seen.size(), " of ",
                            shapes.size(), " shapes of the job were checked"));
  }
  return absl::OkStatus();
}

absl::Status CheckGpu(const v1::GpuSpec& registered, const v1::JobResult& r) {
  const v1::GpuSpec& g = r.gpu();
  if (g.name() != registered.name() || g.arch() != registered.arch() ||
      (!registered.uuid().empty() && g.uuid() != registered.uuid())) {
    return Bad(absl::StrCat("the result names GPU '", g.name().substr(0, 128),
                            "' (", g.arch(), ", uuid ", g.uuid().substr(0, 64),
                            ") but the worker registered '", registered.name(),
                            "' (", registered.arch(), ", uuid ",
                            registered.uuid(), ")"));
  }
  const v1::ReproManifest& m = r.manifest();
  if (!m.gpu_name().empty() && m.gpu_name() != registered.name()) {
    return Bad(
        "the result's manifest names another GPU than the worker "
        "registered");
  }
  return absl::OkStatus();
}

// Reports a kind never produces.
absl::Status CheckKindReports(v1::JobKind kind, const v1::JobResult& r) {
  const bool timed =
      kind == v1::JOB_KIND_SUBMIT || kind == v1::JOB_KIND_PROFILE;
  if (r.has_timing() && !timed) {
    return Bad(
        "the result has a timing report, which this kind of job "
        "never produces");
  }
  if (r.has_profile() && kind != v1::JOB_KIND_PROFILE) {
    return Bad("the result has a profile, but the job is not a profile job");
  }
  if (r.has_sanitize() && kind != v1::JOB_KIND_SANITIZE) {
    return Bad(
        "the result has a sanitizer report, but the job is not a "
        "sanitize job");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckWorkerResult(const v1::RunnerJob& job,
                               const v1::GpuSpec& registered,
                               const v1::JobResult& result,
                               const ResultLimits& limits) {
  RETURN_IF_ERROR(CheckSizes(result, limits));
  const v1::Verdict verdict = result.verdict();
  if (verdict == v1::VERDICT_UNSPECIFIED || !v1::Verdict_IsValid(verdict)) {
    return Bad(absl::StrCat("the verdict (", static_cast<int>(verdict),
                            ") is not one kbd knows"));
  }
  const bool passed = verdict == v1::VERDICT_PASSED;
  RETURN_IF_ERROR(CheckGpu(registered, result));
  if (!result.manifest().source_digest().empty() &&
      result.manifest().source_digest() != Sha256Hex(job.source())) {
    return Bad(
        "the result's manifest is of another source than the job's "
        "(source digests differ)");
  }
  RETURN_IF_ERROR(CheckKindReports(job.kind(), result));
  if (result.error().code() < 0 || result.error().code() > 16) {
    return Bad(absl::StrCat("error.code ", result.error().code(),
                            " is not a status code"));
  }
  if (passed && result.error().code() != 0) {
    return Bad(absl::StrCat("verdict PASSED with an error (code ",
                            result.error().code(), ")"));
  }
  if (!Finite(result.runner_ms())) {
    return Bad(absl::StrCat("runner_ms is ", result.runner_ms()));
  }
  const v1::JobKind kind = job.kind();
  if (kind == v1::JOB_KIND_SANITIZE) {
    if (passed) {
      if (!result.has_sanitize()) {
        return Bad("verdict PASSED without a sanitizer report");
      }
      const v1::SanitizeReport& s = result.sanitize();
      if (s.findings_size() > 0) {
        return Bad(absl::StrCat("verdict PASSED but the sanitizer report has ",
                                s.findings_size(), " findings"));
      }
      // Every tool the job asked for (all of them when it named none) must
      // have run: a PASSED report with nothing run checks nothing.
      for (const std::string& tool : job.sanitize_tools()) {
        bool ran = false;
        for (const v1::SanitizeToolRun& run : s.runs()) {
          ran = ran || run.tool() == tool;
        }
        if (!ran) {
          return Bad(absl::StrCat("verdict PASSED but the ", tool,
                                  " run the job asked for is missing"));
        }
      }
      if (s.runs_size() == 0) {
        return Bad("verdict PASSED but the sanitizer report has no runs");
      }
      for (const v1::SanitizeToolRun& run : s.runs()) {
        if (run.findings() != 0 || run.timed_out()) {
          return Bad(
              absl::StrCat("verdict PASSED but the ", run.tool(), " run ",
                           run.timed_out() ? "timed out" : "found errors"));
        }
      }
    }
    return absl::OkStatus();
  }
  if (passed && !result.has_correctness()) {
    return Bad("verdict PASSED without a correctness report");
  }
  if (result.has_correctness()) {
    RETURN_IF_ERROR(CheckCorrectness(job, result.correctness(), passed));
  }
  const bool timed =
      kind == v1::JOB_KIND_SUBMIT || kind == v1::JOB_KIND_PROFILE;
  if (passed && timed && !result.has_timing()) {
    return Bad("verdict PASSED without the timing report the job asks for");
  }
  if (result.has_timing()) {
    RETURN_IF_ERROR(
        CheckTiming("timing", result.timing(), job, passed, limits));
  }
  if (kind == v1::JOB_KIND_PROFILE && result.has_profile()) {
    const v1::ProfileReport& p = result.profile();
    RETURN_IF_ERROR(CheckStats("profile.total", p.total(), false, 0));
    // The counted rank must be one of the job's (world_size 0: one GPU).
    const int world =
        job.problem().world_size() > 1 ? job.problem().world_size() : 0;
    if (p.world_size() != world || p.rank() < 0 ||
        p.rank() >= std::max(1, world)) {
      return Bad(absl::StrCat(
          "profile.rank ", p.rank(), " of world_size ", p.world_size(),
          " is not a rank of the job, whose problem spans ", std::max(1, world),
          world > 0 ? " GPUs" : " GPU"));
    }
    if (p.has_timing()) {
      RETURN_IF_ERROR(
          CheckTiming("profile.timing", p.timing(), job, passed, limits));
    }
    for (const v1::LaunchProfile& launch : p.launches()) {
      RETURN_IF_ERROR(
          CheckStats("profile.launches.time", launch.time(), false, 0));
    }
  }
  return absl::OkStatus();
}

}  // namespace kbench
