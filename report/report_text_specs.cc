// FormatGpuSpecs and FormatProblem (declared in report/report_text.h): the
// texts that describe the environment rather than a job.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "contract/problem_util.h"
#include "report/report_text.h"

namespace kbench {
namespace {

std::string RoleName(v1::TensorRole role) {
  switch (role) {
    case v1::TENSOR_ROLE_INPUT:
      return "input";
    case v1::TENSOR_ROLE_OUTPUT:
      return "output";
    default:
      return "tensor";
  }
}

// Dims of a shape in the problem's dim order, then any others by name.
std::string ShapeDimsText(const v1::Problem& problem, const v1::Shape& shape) {
  std::vector<std::string> parts;
  for (const v1::DimSpec& dim : problem.dims()) {
    auto it = shape.dims().find(dim.name());
    if (it != shape.dims().end()) {
      parts.push_back(absl::StrCat(dim.name(), "=", it->second));
    }
  }
  std::vector<std::string> extra;
  for (const auto& [name, value] : shape.dims()) {
    bool known = false;
    for (const v1::DimSpec& dim : problem.dims()) known |= dim.name() == name;
    if (!known) extra.push_back(absl::StrCat(name, "=", value));
  }
  std::sort(extra.begin(), extra.end());
  parts.insert(parts.end(), extra.begin(), extra.end());
  return absl::StrJoin(parts, " ");
}

// Indents every line of a multi-line text by two spaces.
std::string Indent(absl::string_view text) {
  std::string out;
  for (absl::string_view line :
       absl::StrSplit(absl::StripAsciiWhitespace(text), '\n')) {
    absl::StrAppend(&out, "  ", absl::StripTrailingAsciiWhitespace(line), "\n");
  }
  return out;
}

void AppendGpu(const v1::WorkerGpu& w, std::string* out) {
  const v1::GpuSpec& g = w.spec();
  absl::StrAppend(out, "GPU ", w.gpu_index(), ": ",
                  g.name().empty() ? "unknown GPU" : g.name());
  if (!w.hostname().empty()) absl::StrAppend(out, " on ", w.hostname());
  std::vector<std::string> who;
  if (!w.worker_id().empty()) who.push_back("worker " + w.worker_id());
  if (!w.host_id().empty()) who.push_back("host " + w.host_id());
  if (!who.empty()) absl::StrAppend(out, " (", absl::StrJoin(who, ", "), ")");
  absl::StrAppend(out, " — ", w.busy() ? "busy" : "idle");
  if (w.busy() && !w.current_job_id().empty()) {
    absl::StrAppend(out, " with job ", w.current_job_id());
  }
  absl::StrAppend(out, ", ", w.jobs_done(), " jobs done\n");
  if (!w.links().empty()) {
    std::vector<std::string> links;
    for (const v1::GpuLink& l : w.links()) {
      links.push_back(
          l.peer_access()
              ? absl::StrFormat("GPU %d (peer access, rank %d, %.0f GB/s)",
                                l.peer_gpu_index(), l.performance_rank(),
                                l.copy_gbps())
              : absl::StrFormat("GPU %d (no peer access)", l.peer_gpu_index()));
    }
    absl::StrAppend(out, "  links: ", absl::StrJoin(links, ", "), "\n");
  }
  absl::StrAppend(out, "  arch: ", g.arch(), " (compute capability ",
                  g.cc_major(), ".", g.cc_minor(), "), ", g.sm_count(),
                  " SMs, SM clock ", g.sm_clock_mhz(), " MHz\n");
  absl::StrAppend(out, "  memory: ", FormatBytes(g.memory_bytes()), ", ",
                  absl::StrFormat("%.0f GB/s", g.theoretical_memory_gbps()),
                  " theoretical (", g.memory_bus_bits(), "-bit bus, ",
                  g.memory_clock_mhz(), " MHz); L2 ", FormatBytes(g.l2_bytes()),
                  "\n");
  absl::StrAppend(
      out, "  shared memory: ", FormatBytes(g.smem_per_block_bytes()),
      " per block, ", FormatBytes(g.smem_per_block_optin_bytes()),
      " per block with opt-in, ", FormatBytes(g.smem_per_sm_bytes()),
      " per SM, ", FormatBytes(g.reserved_smem_per_block_bytes()),
      " reserved per block\n");
  absl::StrAppend(out, "  registers: ", g.regs_per_sm(), " per SM, ",
                  g.regs_per_block(), " per block\n");
  absl::StrAppend(out, "  threads: ", g.max_threads_per_block(), " per block, ",
                  g.max_threads_per_sm(), " per SM; ", g.max_blocks_per_sm(),
                  " blocks per SM; warp size ", g.warp_size(), "\n");
  if (!g.max_block_dims().empty() || !g.max_grid_dims().empty()) {
    absl::StrAppend(out, "  limits: block (",
                    absl::StrJoin(g.max_block_dims(), ", "), "), grid (",
                    absl::StrJoin(g.max_grid_dims(), ", "), ")\n");
  }
  if (!g.driver_version().empty() || !g.nvrtc_version().empty()) {
    absl::StrAppend(out, "  software: driver ", g.driver_version(),
                    ", runtime ", g.runtime_version(), ", NVRTC ",
                    g.nvrtc_version(), "\n");
  }
  if (g.measured_copy_gbps() > 0) {
    absl::StrAppend(
        out, absl::StrFormat("  measured: %.0f GB/s device copy (read "
                             "+ write), %.1f TFLOP/s FP32 FMA\n",
                             g.measured_copy_gbps(), g.measured_fp32_tflops()));
  }
  if (!g.datasheet_name().empty()) {
    absl::StrAppend(
        out, absl::StrFormat("  datasheet values (%s): %.0f GB/s memory, "
                             "%.0f TFLOP/s FP32\n",
                             g.datasheet_name(), g.datasheet_memory_gbps(),
                             g.datasheet_fp32_tflops()));
  }
}

}  // namespace

std::string FormatGpuSpecs(const v1::GetGpuSpecsResponse& specs) {
  if (specs.gpus().empty()) {
    return "no GPU worker is connected: jobs that need a GPU wait in the "
           "queue until one connects (compile works without one)\n";
  }
  std::string out;
  for (int i = 0; i < specs.gpus_size(); ++i) {
    if (i > 0) absl::StrAppend(&out, "\n");
    AppendGpu(specs.gpus(i), &out);
  }
  return out;
}

std::string FormatProblem(const v1::Problem& problem, bool verbose) {
  std::string out = problem.name();
  if (!problem.title().empty()) absl::StrAppend(&out, ": ", problem.title());
  absl::StrAppend(&out, "\n");
  if (!problem.suites().empty()) {
    absl::StrAppend(&out, "suites: ", absl::StrJoin(problem.suites(), ", "),
                    "\n");
  }
  if (verbose && !problem.statement().empty()) {
    absl::StrAppend(&out, "statement:\n", Indent(problem.statement()));
  }
  if (verbose && !problem.reference_pseudocode().empty()) {
    absl::StrAppend(&out, "reference:\n",
                    Indent(problem.reference_pseudocode()));
  }
  absl::StrAppend(&out, "dims:\n");
  for (const v1::DimSpec& d : problem.dims()) {
    absl::StrAppend(&out, "  ", d.name(), " in [", d.min(), ", ", d.max(), "]");
    if (d.multiple_of() > 1) {
      absl::StrAppend(&out, ", multiple of ", d.multiple_of());
    }
    if (!d.description().empty()) absl::StrAppend(&out, " — ", d.description());
    absl::StrAppend(&out, "\n");
  }
  absl::StrAppend(&out, "tensors (row-major, contiguous):\n");
  for (const v1::TensorSpec& t : problem.tensors()) {
    absl::StrAppend(&out, "  ", t.name(), ": ", RoleName(t.role()), " ",
                    DTypeShortName(t.dtype()), " [",
                    absl::StrJoin(t.shape(), ", "), "]");
    if (!t.description().empty()) absl::StrAppend(&out, " — ", t.description());
    absl::StrAppend(&out, "\n");
  }
  const std::string entry =
      problem.entry_point().empty() ? "kernel" : problem.entry_point();
  absl::StrAppend(&out, "entry point:\n  ", EntryPrototype(problem, entry),
                  "\n");
  std::vector<std::string> checked(problem.check_shape_sets().begin(),
                                   problem.check_shape_sets().end());
  absl::StrAppend(&out, "shape sets (timed: ", problem.default_shape_set(),
                  "; checked when none is named: ",
                  checked.empty() ? problem.default_shape_set()
                                  : absl::StrJoin(checked, ", "),
                  "):\n");
  for (const v1::ShapeSet& set : problem.shape_sets()) {
    absl::StrAppend(&out, "  ", set.name());
    if (set.hidden()) absl::StrAppend(&out, " (hidden)");
    if (!set.description().empty()) {
      absl::StrAppend(&out, ": ", set.description());
    }
    if (set.time_budget_ms() > 0) {
      absl::StrAppend(&out, " (budget ",
                      FormatDuration(set.time_budget_ms() * 1e3), ")");
    }
    absl::StrAppend(&out, "\n");
    for (const v1::Shape& shape : set.shapes()) {
      absl::StrAppend(&out, "    ", shape.name(), ": ",
                      ShapeDimsText(problem, shape), "\n");
    }
  }
  if (problem.has_tolerance()) {
    absl::StrAppend(&out, "tolerance: ", ToleranceText(problem.tolerance()),
                    "\n");
  }
  std::vector<std::string> facts;
  if (problem.trials() > 0) {
    facts.push_back(absl::StrCat("trials per shape: ", problem.trials()));
  }
  if (problem.time_budget_ms() > 0) {
    facts.push_back(absl::StrCat(
        "time budget: ", FormatDuration(problem.time_budget_ms() * 1e3),
        " per job"));
  }
  if (!problem.flops().empty()) {
    facts.push_back(absl::StrCat("FLOPs: ", problem.flops()));
  }
  if (!facts.empty()) absl::StrAppend(&out, absl::StrJoin(facts, "; "), "\n");
  if (verbose && !problem.example_kernel().empty()) {
    absl::StrAppend(&out, "example kernel: ", problem.example_kernel(), "\n");
  }
  return out;
}

}  // namespace kbench
