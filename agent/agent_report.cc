#include "agent/agent_report.h"

#include <algorithm>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "contract/problem_util.h"
#include "report/profile_text.h"
#include "report/report_text.h"

namespace kbench {
namespace {

void AppendCompile(const v1::CompileReport& c, const std::string& filename,
                   std::string* out) {
  if (!c.success()) {
    int shown = 0, errors = 0;
    std::string lines;
    for (const v1::Diagnostic& d : c.diagnostics()) {
      if (d.severity() != "error") continue;
      if (++errors <= 5) {
        absl::StrAppend(&lines, "  ", filename, ":", d.line(),
                        ": error: ", d.message(), "\n");
        ++shown;
      }
    }
    absl::StrAppend(out, "compile: FAILED, ", errors, " error(s)",
                    errors > shown ? absl::StrCat(", first ", shown) : "", "\n",
                    lines);
    if (errors == 0 && !c.log().empty()) {
      absl::StrAppend(out, "  log: ", c.log().substr(0, 2000), "\n");
    }
    return;
  }
  absl::StrAppend(out, "compile: ok (", c.arch(), ", ",
                  absl::StrFormat("%.0f ms", c.compile_ms()),
                  c.cached() ? ", cached" : "", ")\n");
  for (const v1::KernelResources& k : c.kernels()) {
    absl::StrAppend(
        out, "  ", k.name(), ": ", k.registers(), " registers/thread, ",
        FormatBytes(k.static_smem_bytes()), " static smem, ",
        FormatBytes(k.stack_frame_bytes()), " stack, ",
        FormatBytes(k.spill_store_bytes() + k.spill_load_bytes()), " spills\n");
  }
}

void AppendCorrectness(const v1::CorrectnessReport& c, std::string* out) {
  if (c.trials_run() == 0) return;
  std::vector<std::string> shapes;
  std::set<std::string> seen;
  double worst_norm = 0, worst_abs = 0;
  for (const v1::TrialResult& t : c.trials()) {
    const std::string s = absl::StrCat(t.shape_set(), "/", t.shape());
    if (seen.insert(s).second) shapes.push_back(s);
    worst_norm = std::max(worst_norm, t.rel_norm_error());
    worst_abs = std::max(worst_abs, t.max_abs_error());
  }
  absl::StrAppend(out, "correctness: ", c.trials_passed(), "/", c.trials_run(),
                  " trials passed on ", shapes.size(), " shape(s) (",
                  absl::StrJoin(shapes, ", "), ")\n");
  absl::StrAppend(
      out,
      absl::StrFormat("precision: worst rel-norm error %.2g (limit %.2g), "
                      "worst max abs error %.2g (limit %.2g + %.2g*|ref|)\n",
                      worst_norm, c.tolerance().max_rel_norm(), worst_abs,
                      c.tolerance().atol(), c.tolerance().rtol()));
  if (!c.passed() && !c.message().empty()) {
    absl::StrAppend(out, "first failure: ", c.message(), "\n");
  }
}

void AppendTiming(const v1::TimingReport& t, const v1::GpuSpec& gpu,
                  std::string* out) {
  if (t.kernel().n() == 0) return;
  const double k = t.kernel().median_us(), r = t.reference().median_us();
  std::string verdict;
  if (t.speedup() >= 1) {
    verdict = absl::StrFormat("%.2fx faster than the reference", t.speedup());
  } else if (t.speedup() > 0) {
    verdict =
        absl::StrFormat("%.2fx slower than the reference", 1.0 / t.speedup());
  }
  absl::StrAppend(out, "time (", t.shape_set(), "/", t.shape(), ", median of ",
                  t.kernel().n(), ", L2 ", t.l2_flushed() ? "cold" : "warm",
                  "): kernel ", FormatDuration(k), " vs reference ",
                  FormatDuration(r), " -> ", verdict, "\n");
  if (!t.ranks().empty()) absl::StrAppend(out, FormatRankTimes(t), "\n");
  absl::StrAppend(out, "launches: ", t.kernel_launches(), " vs ",
                  t.reference_launches(), " (reference)",
                  t.kernel_launches() > 0
                      ? absl::StrFormat(", fusion ratio %.1fx",
                                        double(t.reference_launches()) /
                                            t.kernel_launches())
                      : "",
                  "\n");
  if (t.kernel_memory_bytes() > 0) {
    absl::StrAppend(out, "memory: kernel ",
                    FormatBytes(t.kernel_memory_bytes()), " vs reference ",
                    FormatBytes(t.reference_memory_bytes()),
                    " (tensors + workspaces / intermediates)\n");
  }
  // Speed of light: the kernel against the ceilings measured on this GPU.
  if (k > 0 && t.min_bytes() > 0 && gpu.measured_copy_gbps() > 0) {
    const double gbps = t.min_bytes() / (k * 1e-6) / 1e9;
    const double tflops = t.flops() / (k * 1e-6) / 1e12;
    absl::StrAppend(
        out,
        absl::StrFormat("SOL: memory %.1f%% (%.0f of %.0f GB/s measured), "
                        "compute %.1f%% (%.3g of %.1f TFLOP/s FP32 measured); "
                        "from minimum bytes and useful FLOPs\n",
                        100 * gbps / gpu.measured_copy_gbps(), gbps,
                        gpu.measured_copy_gbps(),
                        gpu.measured_fp32_tflops() > 0
                            ? 100 * tflops / gpu.measured_fp32_tflops()
                            : 0.0,
                        tflops, gpu.measured_fp32_tflops()));
  }
}

void AppendSanitize(const v1::SanitizeReport& s, const std::string& filename,
                    std::string* out) {
  if (s.runs().empty()) return;
  std::vector<std::string> runs;
  for (const v1::SanitizeToolRun& r : s.runs()) {
    std::string run = absl::StrCat(r.tool(), " ", r.findings(), " finding(s)");
    if (r.timed_out()) absl::StrAppend(&run, " TIMED OUT");
    absl::StrAppend(&run, absl::StrFormat(" in %.1f s", r.wall_ms() / 1000));
    runs.push_back(run);
  }
  absl::StrAppend(out, "sanitize (", s.shape_set(), "/", s.shape(),
                  ", 1 trial): ", absl::StrJoin(runs, "; "), "\n");
  constexpr int kShown = 10;
  int n = 0;
  for (const v1::SanitizeFinding& f : s.findings()) {
    if (++n > kShown) {
      absl::StrAppend(out, "... ", s.findings_size() - kShown,
                      " more finding(s) in the structured result\n");
      break;
    }
    absl::StrAppend(out, "finding ", n, " [", f.tool(), "]: ", f.kind(),
                    f.count() > 1 ? absl::StrCat(" (x", f.count(), ")") : "",
                    "\n");
    absl::StrAppend(
        out, "  at ",
        f.line() > 0 ? absl::StrCat(f.file().empty() ? filename : f.file(), ":",
                                    f.line())
                     : std::string("unknown line (no line info)"),
        f.kernel().empty() ? "" : absl::StrCat(" in ", f.kernel()),
        f.source_line().empty() ? "" : absl::StrCat(": ", f.source_line()),
        "\n");
    if (!f.other_access().empty()) {
      absl::StrAppend(
          out, "  with ", f.other_access(),
          f.other_line() > 0 ? absl::StrCat(" at line ", f.other_line()) : "",
          f.other_source_line().empty()
              ? ""
              : absl::StrCat(": ", f.other_source_line()),
          "\n");
    }
    std::vector<std::string> where;
    if (!f.thread().empty()) where.push_back("thread " + f.thread());
    if (!f.block().empty()) where.push_back("block " + f.block());
    if (!f.address().empty()) where.push_back(f.address());
    for (const std::string& d : f.details()) where.push_back(d);
    if (!where.empty()) {
      absl::StrAppend(out, "  ", absl::StrJoin(where, "; "), "\n");
    }
  }
  if (s.findings().empty()) {
    absl::StrAppend(out,
                    "no findings: no invalid or uninitialized accesses "
                    "and no shared-memory races at this shape\n");
  }
  for (const v1::SanitizeToolRun& r : s.runs()) {
    if (!r.log_tail().empty() && s.findings().empty()) {
      absl::StrAppend(out, r.tool(), " output (exit ", r.exit_code(), "):\n",
                      r.log_tail(), "\n");
    }
  }
}

}  // namespace

std::string AgentSanitizeText(const v1::SanitizeReport& report,
                              const std::string& filename) {
  std::string out;
  AppendSanitize(report, filename, &out);
  return out;
}

std::string AgentJobText(const v1::Job& job) {
  const v1::JobResult& r = job.result();
  std::string out = absl::StrCat("VERDICT: ", VerdictName(r.verdict()), " (",
                                 ToolNameOf(job.kind()), " on ", job.problem(),
                                 ", job ", job.id(), ")\n");
  if (!r.message().empty() && r.verdict() != v1::VERDICT_PASSED) {
    absl::StrAppend(&out, "why: ", r.message(), "\n");
  }
  if (r.has_compile()) AppendCompile(r.compile(), job.filename(), &out);
  AppendCorrectness(r.correctness(), &out);
  if (r.has_sanitize()) AppendSanitize(r.sanitize(), job.filename(), &out);
  AppendTiming(r.timing(), r.gpu(), &out);
  const v1::ProfileReport& p = r.profile();
  AppendProfileRank(p, "", &out);
  for (const v1::LaunchProfile& l : p.launches()) {
    absl::StrAppend(&out, "launch ", l.entry(), ": ",
                    FormatDuration(l.time().median_us()),
                    absl::StrFormat(" (%.0f%%)", l.share_pct()));
    if (!l.grid().empty()) {
      absl::StrAppend(
          &out, ", grid(", absl::StrJoin(l.grid(), ","), ") block(",
          absl::StrJoin(l.block(), ","), "), ", l.registers(), " regs, smem ",
          FormatBytes(l.static_smem_bytes()), " static + ",
          FormatBytes(l.dynamic_smem_bytes()), " dynamic + ",
          FormatBytes(l.reserved_smem_bytes()), " reserved, ",
          absl::StrFormat("theoretical occupancy %.0f%%, %.2f waves",
                          l.theoretical_occupancy_pct(), l.waves()));
    }
    absl::StrAppend(&out, "\n");
    AppendLaunchCounters(p, l, "  ", &out);
  }
  if (p.total().n() > 0) {
    absl::StrAppend(
        &out,
        absl::StrFormat("throughput: %.3g TFLOP/s, %.0f GB/s (minimum bytes: "
                        "inputs read once, outputs written once)",
                        p.achieved_tflops(), p.achieved_gbps()));
    if (r.gpu().measured_copy_gbps() > 0) {
      absl::StrAppend(
          &out, absl::StrFormat(
                    "; memory SOL %.1f%% of the measured %.0f GB/s",
                    100 * p.achieved_gbps() / r.gpu().measured_copy_gbps(),
                    r.gpu().measured_copy_gbps()));
    }
    absl::StrAppend(&out, "\n");
  }
  if (r.has_profile()) AppendProfileAnalysis(p, "", &out);
  if (r.has_gpu() && !r.gpu().name().empty()) {
    absl::StrAppend(&out, "gpu: ", r.gpu().name(), " (", r.gpu().arch(), ")\n");
  }
  return out;
}

std::string AgentSpecsText(const v1::GetGpuSpecsResponse& specs) {
  if (specs.gpus().empty()) return "no GPU worker is connected\n";
  std::string out;
  for (const v1::WorkerGpu& w : specs.gpus()) {
    const v1::GpuSpec& g = w.spec();
    absl::StrAppend(&out, "GPU: ", g.name(), " (", g.arch(),
                    ", compute capability ", g.cc_major(), ".", g.cc_minor(),
                    ") on worker ", w.worker_id(),
                    w.busy() ? ", busy" : ", idle", "\n");
    absl::StrAppend(&out, "  ", g.sm_count(), " SMs at up to ",
                    g.sm_clock_mhz(), " MHz; memory ",
                    FormatBytes(g.memory_bytes()), "; L2 ",
                    FormatBytes(g.l2_bytes()), "\n");
    absl::StrAppend(&out, "  per SM: ", g.regs_per_sm(), " registers, ",
                    FormatBytes(g.smem_per_sm_bytes()), " shared memory, ",
                    g.max_threads_per_sm(), " threads, ", g.max_blocks_per_sm(),
                    " blocks\n");
    absl::StrAppend(
        &out, "  per block: ", g.max_threads_per_block(), " threads, ",
        g.regs_per_block(), " registers (255 per thread), shared memory ",
        FormatBytes(g.smem_per_block_bytes()), " (",
        FormatBytes(g.smem_per_block_optin_bytes()), " with opt-in; ",
        FormatBytes(g.reserved_smem_per_block_bytes()),
        " reserved by the driver)\n");
    absl::StrAppend(
        &out,
        absl::StrFormat("  measured on this GPU: %.0f GB/s device copy (read "
                        "+ write), %.1f TFLOP/s FP32 FMA\n",
                        g.measured_copy_gbps(), g.measured_fp32_tflops()));
    if (!g.datasheet_name().empty()) {
      absl::StrAppend(
          &out, absl::StrFormat("  datasheet values (%s): %.0f GB/s memory, "
                                "%.0f TFLOP/s FP32\n",
                                g.datasheet_name(), g.datasheet_memory_gbps(),
                                g.datasheet_fp32_tflops()));
    }
  }
  return out;
}

std::string AgentProblemListText(const v1::ListProblemsResponse& list) {
  std::string out = absl::StrCat("PROBLEMS: ", list.problems_size(), "\n");
  for (const v1::Problem& p : list.problems()) {
    absl::StrAppend(&out, "- ", p.name(), " — ", p.title());
    if (!p.suites().empty()) {
      absl::StrAppend(&out, " [", absl::StrJoin(p.suites(), ", "), "]");
    }
    absl::StrAppend(&out, "\n");
  }
  absl::StrAppend(&out, "suites: ",
                  list.suites().empty() ? std::string("(none)")
                                        : absl::StrJoin(list.suites(), ", "),
                  "\n");
  return out;
}

std::string AgentProblemText(const v1::GetProblemResponse& r) {
  const v1::Problem& p = r.problem();
  std::string out =
      absl::StrCat("PROBLEM: ", p.name(), " — ", p.title(), "\n", p.statement(),
                   "\n\nREFERENCE SEMANTICS:\n", p.reference_pseudocode(),
                   "\n\nSIGNATURE:\n  ", r.entry_prototype(), "\n\n");
  absl::StrAppend(&out, r.contract());
  return out;
}

std::string AgentCompareText(const v1::CompareRunsResponse& c) {
  auto side = [](const char* label, const v1::RunSummary& s) {
    std::string line = absl::StrCat(label, ": turn ", s.turn(), " ", s.tool(),
                                    " -> ", VerdictName(s.verdict()));
    if (s.trials_run() > 0) {
      absl::StrAppend(&line, ", ", s.trials_passed(), "/", s.trials_run(),
                      " trials");
    }
    if (s.kernel_median_us() > 0) {
      absl::StrAppend(&line, ", kernel ", FormatDuration(s.kernel_median_us()),
                      absl::StrFormat(", speedup %.2fx", s.speedup()));
    }
    return line + "\n";
  };
  std::string out = side("A", c.a()) + side("B", c.b());
  if (c.a().kernel_median_us() > 0 && c.b().kernel_median_us() > 0) {
    absl::StrAppend(
        &out,
        absl::StrFormat("change: kernel time %+.1f%% (%s), speedup "
                        "%+.2f\n",
                        c.kernel_time_change_pct(),
                        c.kernel_time_change_pct() <= 0 ? "faster" : "slower",
                        c.speedup_change()));
  }
  if (c.source_diff().empty()) {
    absl::StrAppend(&out, "source: identical\n");
  } else {
    absl::StrAppend(&out, "source: +", c.lines_added(), " -", c.lines_removed(),
                    " lines\n", c.source_diff());
  }
  return out;
}

}  // namespace kbench
