// tool_latency: p50/p99 wall time of each agent tool over gRPC against a
// running (warm) kbd, as an agent sees it. Prints a Markdown table (stdout)
// with the targets of docs/benchmarks.md, and optionally JSON.
//
//   tool_latency --server 127.0.0.1:50051 --iterations 30 [--json out.json]
//
// Tools measured: get_gpu_specs; compile_kernel cold (a new source each
// time, so NVRTC runs) and cached (the same source); run_correctness with a
// cached compile and with a cold one; profile_kernel with the full and the
// fast counter presets (a new source each call, counters required);
// submit_kernel.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/kbench_client.h"
#include "nlohmann/json.hpp"

namespace {

struct Row {
  Row(std::string t, double target) : tool(std::move(t)), target_ms(target) {}
  std::string tool;
  double target_ms;  // 0 = no target.
  std::vector<double> ms;
  int errors = 0;
  std::string last_error;
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double idx = p * (v.size() - 1);
  const size_t lo = static_cast<size_t>(idx);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (idx - lo);
}

void Measure(Row* row, int n, const std::function<absl::Status(int)>& call) {
  for (int i = 0; i < n; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const absl::Status s = call(i);
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - t0)
                          .count();
    if (s.ok()) {
      row->ms.push_back(ms);
    } else {
      ++row->errors;
      row->last_error = std::string(s.message());
    }
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tool_latency: p50/p99 of each kbench tool over gRPC"};
  std::string server = "127.0.0.1:50051";
  std::string kernel_path;
  std::string json_path;
  int n = 30;
  app.add_option("--server", server, "kbd address")->capture_default_str();
  app.add_option("--kernel", kernel_path,
                 "Kernel file (default: the naive example)")
      ->required();
  app.add_option("--iterations", n, "Calls per tool (profile/submit: n/3)")
      ->capture_default_str();
  app.add_option("--json", json_path, "Also write the figures as JSON here");
  CLI11_PARSE(app, argc, argv);

  kbench::KbenchClient client(server, absl::Seconds(120));
  const std::string source = ReadFile(kernel_path);
  if (source.empty()) {
    std::fprintf(stderr, "tool_latency: cannot read %s\n", kernel_path.c_str());
    return 2;
  }
  auto kernel = [&](const std::string& text) {
    kbench::v1::KernelRequest k;
    k.set_source(text);
    k.set_filename("kernel.cu");
    return k;
  };
  const std::string salt = absl::StrFormat(
      "%d", std::chrono::steady_clock::now().time_since_epoch().count());
  auto unique = [&](const std::string& tag, int i) {
    return absl::StrCat(source, "\n// ", tag, " ", salt, " ", i, "\n");
  };

  // Warm-up: the service, the runner's context and caches.
  {
    kbench::v1::SubmitKernelRequest req;
    *req.mutable_kernel() = kernel(source);
    auto r = client.SubmitKernel(req);
    if (!r.ok()) {
      std::fprintf(stderr, "tool_latency: warm-up submit failed: %s\n",
                   std::string(r.status().message()).c_str());
      return 2;
    }
  }

  std::vector<Row> rows = {{"get_gpu_specs", 50},
                           {"compile_kernel (cold)", 300},
                           {"compile_kernel (cached)", 20},
                           {"run_correctness (compile cached)", 500},
                           {"run_correctness (compile cold)", 0},
                           {"profile_kernel (full preset)", 1500},
                           {"profile_kernel (fast preset)", 1500},
                           {"submit_kernel", 3000}};
  Measure(&rows[0], n, [&](int) {
    return client.GetGpuSpecs(kbench::v1::GetGpuSpecsRequest()).status();
  });
  Measure(&rows[1], n, [&](int i) {
    kbench::v1::CompileKernelRequest req;
    *req.mutable_kernel() = kernel(unique("cold", i));
    return client.CompileKernel(req).status();
  });
  Measure(&rows[2], n, [&](int) {
    kbench::v1::CompileKernelRequest req;
    *req.mutable_kernel() = kernel(source);
    return client.CompileKernel(req).status();
  });
  auto check = [&](const std::string& text) -> absl::Status {
    kbench::v1::RunCorrectnessRequest req;
    *req.mutable_kernel() = kernel(text);
    auto r = client.RunCorrectness(req);
    if (!r.ok()) return r.status();
    if (r->result().verdict() != kbench::v1::VERDICT_PASSED) {
      return absl::InternalError(r->result().message());
    }
    return absl::OkStatus();
  };
  Measure(&rows[3], n, [&](int) { return check(source); });
  Measure(&rows[4], n, [&](int i) { return check(unique("check", i)); });
  // A fresh source per call, so nothing is cached; a profile without
  // hardware counters counts as an error.
  auto profile = [&](const std::string& preset, int i) -> absl::Status {
    kbench::v1::ProfileKernelRequest req;
    *req.mutable_kernel() = kernel(unique("profile-" + preset, i));
    req.mutable_kernel()->set_profile_preset(preset);
    auto r = client.ProfileKernel(req);
    if (!r.ok()) return r.status();
    if (r->result().verdict() != kbench::v1::VERDICT_PASSED) {
      return absl::InternalError(r->result().message());
    }
    if (!r->result().profile().counters_unavailable().empty()) {
      return absl::InternalError(r->result().profile().counters_unavailable());
    }
    return absl::OkStatus();
  };
  Measure(&rows[5], std::max(1, n / 3),
          [&](int i) { return profile("full", i); });
  Measure(&rows[6], std::max(1, n / 3),
          [&](int i) { return profile("fast", i); });
  Measure(&rows[7], std::max(1, n / 3), [&](int) {
    kbench::v1::SubmitKernelRequest req;
    *req.mutable_kernel() = kernel(source);
    return client.SubmitKernel(req).status();
  });

  std::printf(
      "| tool | n | p50 (ms) | p99 (ms) | max (ms) | target (ms) | meets |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  nlohmann::json out = nlohmann::json::array();
  for (const Row& r : rows) {
    const double p50 = Percentile(r.ms, 0.5), p99 = Percentile(r.ms, 0.99);
    const double mx =
        r.ms.empty() ? 0 : *std::max_element(r.ms.begin(), r.ms.end());
    const std::string target =
        r.target_ms > 0 ? absl::StrFormat("<= %.0f", r.target_ms) : "-";
    const std::string meets =
        r.target_ms <= 0 ? "-" : (p50 <= r.target_ms ? "yes" : "NO");
    std::printf("| %s | %zu | %.1f | %.1f | %.1f | %s | %s |\n", r.tool.c_str(),
                r.ms.size(), p50, p99, mx, target.c_str(), meets.c_str());
    if (r.errors > 0) {
      std::fprintf(stderr, "%s: %d errors; last: %s\n", r.tool.c_str(),
                   r.errors, r.last_error.c_str());
    }
    out.push_back({{"tool", r.tool},
                   {"n", r.ms.size()},
                   {"p50_ms", p50},
                   {"p99_ms", p99},
                   {"max_ms", mx},
                   {"target_ms", r.target_ms},
                   {"errors", r.errors}});
  }
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
  return 0;
}
