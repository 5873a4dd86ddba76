// timing_truth: are kbench's times stable, and do they agree with Nsight
// Compute? Against a running (warm) kbd:
//
//   timing_truth --server 127.0.0.1:50051 --kernel K.cu [--shapes SET]
//       [--submits 10] [--checks 30] [--ncu-csv ncu.csv --ncu-grid "(a, b, c)"]
//       [--json out.json]
//
// 1. Submits the same kernel --submits times and reports the median kernel
//    time of each submit, and the coefficient of variation of those medians
//    (target: <= 2%).
// 2. Runs run_correctness --checks times and reports its p50 wall time
//    (target: <= 500 ms at the default shape).
// 3. With --ncu-csv: reads an `ncu --csv --metrics gpu__time_duration.sum`
//    log of the same kernel at the same shape (launches whose grid is
//    --ncu-grid) and compares the median of ncu's durations with the median
//    of the service's kernel GPU times (CUPTI kernel activity; target: within
//    5% for kernels >= 10 us), and with the event-timed plan time.
// Prints Markdown to stdout; exits 0 when every figure was measured.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/ncu_csv.h"
#include "client/kbench_client.h"
#include "nlohmann/json.hpp"

namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / v.size();
}

double StdDev(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = Mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / (v.size() - 1));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Durations in us of the launches of `entry` with grid `grid` in an ncu CSV
// log with gpu__time_duration.sum; empty when none.
std::vector<double> NcuDurationsUs(const std::string& csv,
                                   const std::string& entry,
                                   const std::string& grid) {
  std::vector<double> us;
  for (const kbench::NcuRow& row : kbench::ParseNcuCsv(csv)) {
    if (row.metric != "gpu__time_duration.sum") continue;
    if (row.kernel.rfind(entry, 0) != 0) continue;
    if (!grid.empty() && row.grid != grid) continue;
    us.push_back(row.value / 1000);  // ns
  }
  return us;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"timing_truth: stability of kbench's times, and ncu agreement"};
  std::string server = "127.0.0.1:50051";
  std::string kernel_path, shapes, ncu_csv, ncu_grid, entry = "gather_linear",
                                                      json_path;
  int submits = 10, checks = 30;
  app.add_option("--server", server, "kbd address")->capture_default_str();
  app.add_option("--kernel", kernel_path, "kernel file")->required();
  app.add_option("--shapes", shapes, "shape set to time (default: default)");
  app.add_option("--submits", submits, "submits of the same kernel")
      ->capture_default_str();
  app.add_option("--checks", checks, "run_correctness calls (0: none)")
      ->capture_default_str();
  app.add_option("--ncu-csv", ncu_csv, "ncu --csv log of the same kernel");
  app.add_option("--ncu-grid", ncu_grid,
                 "grid of the timed launches in the ncu log, e.g. "
                 "\"(256, 4, 1)\"");
  app.add_option("--entry", entry, "kernel name in the ncu log")
      ->capture_default_str();
  app.add_option("--json", json_path, "also write the figures as JSON here");
  CLI11_PARSE(app, argc, argv);

  const std::string source = ReadFile(kernel_path);
  if (source.empty()) {
    std::fprintf(stderr, "timing_truth: cannot read %s\n", kernel_path.c_str());
    return 2;
  }
  kbench::KbenchClient client(server, absl::Seconds(300));
  kbench::v1::KernelRequest kernel;
  kernel.set_source(source);
  kernel.set_filename("kernel.cu");
  kernel.set_shape_set(shapes);

  nlohmann::json out;
  std::vector<double> medians;      // Events around the plan.
  std::vector<double> gpu_medians;  // CUPTI kernel activity.
  std::string shape_name;
  for (int i = 0; submits > 0 && i <= submits; ++i) {  // 0 warms up.
    kbench::v1::SubmitKernelRequest req;
    *req.mutable_kernel() = kernel;
    auto r = client.SubmitKernel(req);
    if (!r.ok() || r->result().verdict() != kbench::v1::VERDICT_PASSED) {
      std::fprintf(stderr, "timing_truth: submit %d failed: %s\n", i,
                   r.ok() ? r->result().message().c_str()
                          : std::string(r.status().message()).c_str());
      return 1;
    }
    if (i == 0) continue;
    const kbench::v1::TimingReport& t = r->result().timing();
    medians.push_back(t.kernel().median_us());
    if (t.kernel_gpu().n() > 0)
      gpu_medians.push_back(t.kernel_gpu().median_us());
    shape_name = absl::StrCat(t.shape_set(), "/", t.shape());
  }
  const double cv = Mean(medians) > 0 ? StdDev(medians) / Mean(medians) : 0;
  std::printf("## %d submits of %s at %s\n\n", submits, kernel_path.c_str(),
              shape_name.c_str());
  std::printf("medians (us):");
  for (double m : medians) std::printf(" %.2f", m);
  std::printf("\n\n| figure | value | target | meets |\n|---|---|---|---|\n");
  std::printf("| mean of medians | %.3f us | - | - |\n", Mean(medians));
  if (!gpu_medians.empty()) {
    std::printf(
        "| kernel GPU time (CUPTI), median of %zu submits | %.3f us | - "
        "| - |\n",
        gpu_medians.size(), Median(gpu_medians));
  }
  std::printf("| CV of medians | %.2f %% | <= 2 %% | %s |\n", 100 * cv,
              cv <= 0.02 ? "yes" : "NO");
  out["shape"] = shape_name;
  out["medians_us"] = medians;
  out["cv_pct"] = 100 * cv;

  if (checks > 0) {
    std::vector<double> ms;
    for (int i = 0; i < checks; ++i) {
      kbench::v1::RunCorrectnessRequest req;
      *req.mutable_kernel() = kernel;
      req.mutable_kernel()->clear_shape_set();
      const auto t0 = std::chrono::steady_clock::now();
      auto r = client.RunCorrectness(req);
      if (!r.ok() || r->result().verdict() != kbench::v1::VERDICT_PASSED) {
        std::fprintf(stderr, "timing_truth: check %d failed\n", i);
        return 1;
      }
      ms.push_back(std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - t0)
                       .count());
    }
    const double p50 = Median(ms);
    std::printf("| run_correctness p50 (n=%d) | %.1f ms | <= 500 ms | %s |\n",
                checks, p50, p50 <= 500 ? "yes" : "NO");
    out["correctness_p50_ms"] = p50;
  }

  if (!ncu_csv.empty()) {
    const std::vector<double> ncu =
        NcuDurationsUs(ReadFile(ncu_csv), entry, ncu_grid);
    if (ncu.empty()) {
      std::fprintf(stderr,
                   "timing_truth: no gpu__time_duration.sum rows for %s with "
                   "grid %s in %s\n",
                   entry.c_str(), ncu_grid.c_str(), ncu_csv.c_str());
      return 1;
    }
    const double ours = Median(medians), theirs = Median(ncu);
    std::printf(
        "| ncu gpu__time_duration median (n=%zu launches, grid %s) | %.3f us "
        "| - | - |\n",
        ncu.size(), ncu_grid.c_str(), theirs);
    // The events' plan time includes the launch and event overhead (about
    // 1.5 us); the CUPTI kernel time is what ncu's gpu__time_duration spans.
    if (!medians.empty()) {
      const double diff = (ours - theirs) / theirs;
      std::printf("| plan time (events) - ncu | %+.2f %% | - | - |\n",
                  100 * diff);
      out["events_vs_ncu_pct"] = 100 * diff;
    }
    if (!gpu_medians.empty()) {
      const double g = (Median(gpu_medians) - theirs) / theirs;
      std::printf(
          "| kernel GPU time (CUPTI) - ncu | %+.2f %% | within 5 %% | %s |\n",
          100 * g, std::fabs(g) <= 0.05 ? "yes" : "NO");
      out["kbench_vs_ncu_pct"] = 100 * g;
      out["kernel_gpu_median_us"] = Median(gpu_medians);
    }
    out["ncu_median_us"] = theirs;
    out["ncu_launches"] = ncu.size();
  }
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
  return 0;
}
