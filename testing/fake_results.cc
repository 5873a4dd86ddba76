#include "testing/fake_results.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "analysis/counter_figures.h"
#include "analysis/hot_lines.h"
#include "contract/problem_util.h"

namespace kbench {

v1::Stats FakeStats(double median_us) {
  v1::Stats s;
  s.set_mean_us(median_us * 1.01);
  s.set_median_us(median_us);
  s.set_std_us(median_us * 0.02);
  s.set_min_us(median_us * 0.97);
  s.set_max_us(median_us * 1.05);
  s.set_n(10);
  s.set_rel_stderr(0.02 / 3.1623);
  return s;
}

namespace {

// Counters, reference kernels and hot lines of a fake profile.
void FillFakeCounters(const v1::RunnerJob& job, const v1::GpuSpec& spec,
                      v1::ProfileReport* profile, v1::LaunchProfile* launch) {
  const std::map<std::string, double> values = {
      {"gpu__time_duration.sum", 11520},
      {"dram__bytes_read.sum", 41472},
      {"dram__bytes_write.sum", 11776},
      {"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", 0.096},
      {"lts__t_sector_hit_rate.pct", 109.25},
      {"l1tex__t_sector_hit_rate.pct", 87.57},
      {"sm__warps_active.avg.pct_of_peak_sustained_active", 3.29},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 6168},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 89172},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", 24},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 84},
      {"smsp__warps_eligible.avg.per_cycle_active", 0.042},
      {"smsp__warps_active.avg.per_cycle_active", 1.04},
      {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 0.25},
      {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
       3.55},
      {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 86016},
  };
  DeriveCounterFigures(values, spec, launch);
  profile->set_preset(job.profile_preset().empty() ? "full"
                                                   : job.profile_preset());
  profile->set_passes(job.profile_preset() == "fast" ? 3 : 16);
  profile->set_counters_ms(job.profile_preset() == "fast" ? 150 : 600);
  for (const char* name : {"concat_last_dim", "sm90_xmma_gemm_f32f32 (fake)"}) {
    v1::LaunchProfile* r = profile->add_reference_launches();
    r->set_entry(name);
    DeriveCounterFigures({{"gpu__time_duration.sum", 4000}}, spec, r);
    r->set_share_pct(50);
  }
  if (job.profile_preset() == "fast") return;
  // Hot lines: 70/20/10% of 1000 samples on the first "+=", "for (" and
  // "out[" lines of the source.
  std::vector<PcSample> samples;
  const std::pair<const char*, int64_t> hot[] = {
      {"+=", 700}, {"for (", 200}, {"out[", 100}};
  const std::vector<std::string> lines = absl::StrSplit(job.source(), '\n');
  for (const auto& [needle, n] : hot) {
    for (size_t i = 0; i < lines.size(); ++i) {
      const absl::string_view code =
          absl::StripLeadingAsciiWhitespace(lines[i]);
      if (absl::StartsWith(code, "//") || !absl::StrContains(code, needle)) {
        continue;
      }
      samples.push_back(
          {"gather_linear", job.filename(), static_cast<int>(i + 1),
           "smsp__pcsamp_warps_issue_stalled_long_scoreboard", n});
      break;
    }
  }
  int64_t total = 0;
  for (v1::SourceLine& l :
       RankSourceLines(samples, job.source(), job.filename(), 8, &total)) {
    *profile->add_hot_lines() = std::move(l);
  }
  // The hottest ("+=") line loads as the naive kernel's loop does.
  if (profile->hot_lines_size() > 0) {
    v1::SourceLine* hot = profile->mutable_hot_lines(0);
    hot->set_global_load_requests(6168);
    hot->set_global_load_sectors(89172);
    hot->set_global_load_sectors_per_request(89172 / 6168.0);
  }
  profile->set_pc_samples(total);
}

}  // namespace

v1::GpuSpec FakeSpec() {
  v1::GpuSpec spec;
  spec.set_name("kbench fake GPU (tests only)");
  spec.set_uuid("GPU-00000000-0000-0000-0000-000000000000");
  spec.set_cc_major(9);
  spec.set_cc_minor(0);
  spec.set_arch("sm_90");
  spec.set_sm_count(132);
  spec.set_sm_clock_mhz(1980);
  spec.set_memory_clock_mhz(2619);
  spec.set_memory_bus_bits(5120);
  spec.set_memory_bytes(80LL << 30);
  spec.set_l2_bytes(50LL << 20);
  spec.set_warp_size(32);
  spec.set_max_threads_per_block(1024);
  spec.set_driver_version("fake");
  spec.set_measured_copy_gbps(4000.0);
  spec.set_measured_fp32_tflops(60.0);
  spec.set_measured_launch_us(5.0);
  return spec;
}

int64_t MarkerValue(const std::string& source, absl::string_view marker) {
  const size_t at = source.find(std::string(marker));
  if (at == std::string::npos) return -1;
  size_t end = at + marker.size();
  while (end < source.size() && source[end] >= '0' && source[end] <= '9') {
    ++end;
  }
  int64_t value = -1;
  if (!absl::SimpleAtoi(absl::string_view(source).substr(
                            at + marker.size(), end - at - marker.size()),
                        &value)) {
    return -1;
  }
  return value;
}

v1::JobResult PassResult(const v1::RunnerJob& job) {
  v1::JobResult result;
  result.set_verdict(v1::VERDICT_PASSED);
  result.mutable_compile()->set_success(true);
  result.mutable_compile()->set_arch("sm_90");
  if (job.kind() != v1::JOB_KIND_COMPILE) {
    v1::CorrectnessReport* c = result.mutable_correctness();
    c->set_passed(true);
    for (const v1::ShapeSet& set : job.check_sets()) {
      for (const v1::Shape& shape : set.shapes()) {
        v1::TrialResult* t = c->add_trials();
        t->set_shape_set(set.name());
        t->set_shape(shape.name());
        *t->mutable_dims() = shape.dims();
        t->set_seed(job.seed());
        t->set_passed(true);
      }
    }
    c->set_trials_run(c->trials_size());
    c->set_trials_passed(c->trials_size());
  }
  if (job.kind() == v1::JOB_KIND_SUBMIT || job.kind() == v1::JOB_KIND_PROFILE) {
    v1::TimingReport* timing = result.mutable_timing();
    timing->set_shape_set(job.timing_set());
    timing->set_shape(job.timing_shape().name());
    *timing->mutable_dims() = job.timing_shape().dims();
    const int64_t kernel_us = MarkerValue(job.source(), "FAKE_KERNEL_US=");
    const double kernel_median = kernel_us > 0 ? kernel_us : 10.0;
    *timing->mutable_kernel() = FakeStats(kernel_median);
    *timing->mutable_reference() = FakeStats(20.0);
    timing->set_speedup(20.0 / kernel_median);
    if (absl::StrContains(job.source(), "FAKE_GPU_BASES")) {
      // GPU time and graph replay as a GPU gives them (each shorter than
      // the events, which count launches), at the same speedup.
      *timing->mutable_kernel_gpu() = FakeStats(0.8 * kernel_median);
      *timing->mutable_reference_gpu() = FakeStats(16.0);
      *timing->mutable_kernel_graph() = FakeStats(0.7 * kernel_median);
      *timing->mutable_reference_graph() = FakeStats(14.0);
      timing->set_graph_runs(10);
      timing->set_speedup_events(20.0 / kernel_median);
      timing->set_speedup_gpu(16.0 / (0.8 * kernel_median));
      timing->set_speedup_graph(14.0 / (0.7 * kernel_median));
      timing->set_speedup_basis(v1::TIMING_BASIS_GPU_TIME);
      timing->set_speedup(timing->speedup_gpu());
    }
    const DimValues dims(job.timing_shape().dims().begin(),
                         job.timing_shape().dims().end());
    const absl::StatusOr<double> flops = ProblemFlops(job.problem(), dims);
    const absl::StatusOr<double> min_bytes =
        ProblemMinBytes(job.problem(), dims);
    if (flops.ok() && min_bytes.ok()) {
      timing->set_flops(*flops);
      timing->set_min_bytes(*min_bytes);
      timing->set_kernel_memory_bytes(static_cast<int64_t>(*min_bytes));
      timing->set_reference_memory_bytes(static_cast<int64_t>(*min_bytes) +
                                         (32 << 20));
    }
    timing->set_kernel_launches(1);
    timing->set_reference_launches(2);
    timing->set_reference_name("fake reference (tests only)");
    if (job.problem().has_expert()) {
      // An expert baseline at 12 us (events), 9.6 us (GPU time).
      timing->set_expert_name(job.problem().expert().name());
      timing->set_expert_launches(1);
      *timing->mutable_expert() = FakeStats(12.0);
      timing->set_speedup_vs_expert(12.0 / kernel_median);
      if (timing->kernel_gpu().n() > 0) {
        *timing->mutable_expert_gpu() = FakeStats(9.6);
        *timing->mutable_expert_graph() = FakeStats(8.4);
        timing->set_speedup_vs_expert(9.6 / (0.8 * kernel_median));
      }
    }
    // As kbrunner's RankedTimer: each rank's own span, within the joined.
    for (int r = 0; r < job.world_size() && job.world_size() > 1; ++r) {
      v1::RankTiming* mine = timing->add_ranks();
      mine->set_rank(r);
      *mine->mutable_kernel() = FakeStats(0.9 * kernel_median);
      *mine->mutable_reference() = FakeStats(18.0);
    }
    timing->set_l2_flushed(!job.timing_hot_l2());
    timing->set_stop_reason("fake runner: fixed 10 samples");
    timing->set_wall_ms(1.0);
    if (job.kind() == v1::JOB_KIND_PROFILE) {
      v1::ProfileReport* profile = result.mutable_profile();
      *profile->mutable_total() = FakeStats(kernel_median);
      profile->set_flops(timing->flops());
      profile->set_min_bytes(timing->min_bytes());
      profile->set_achieved_tflops(timing->flops() / (kernel_median * 1e6));
      profile->set_achieved_gbps(timing->min_bytes() / (kernel_median * 1e3));
      profile->set_shape(job.timing_shape().name());
      *profile->mutable_dims() = job.timing_shape().dims();
      if (job.world_size() > 1) {
        // As kbrunner counts a problem that spans GPUs: rank 0's kernels.
        profile->set_rank(0);
        profile->set_world_size(job.world_size());
      }
      *profile->mutable_timing() = *timing;
      // One launch, with made-up stall shares so the dashboard has bars.
      v1::LaunchProfile* launch = profile->add_launches();
      launch->set_entry("gather_linear");
      *launch->mutable_time() = FakeStats(kernel_median);
      launch->set_share_pct(100);
      launch->set_registers(28);
      FillFakeCounters(job, FakeSpec(), profile, launch);
      const std::pair<const char*, double> stalls[] = {
          {"long_scoreboard", 46.5},
          {"wait", 17.25},
          {"not_selected", 12},
          {"math_pipe_throttle", 9.5},
          {"barrier", 4.75}};
      for (const auto& [reason, share] : stalls) {
        v1::StallReason* s = launch->add_top_stalls();
        s->set_reason(reason);
        s->set_share_pct(share);
      }
    }
  }
  return result;
}

}  // namespace kbench
