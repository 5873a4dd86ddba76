// scaling: the throughput of one-GPU jobs on the GPUs a kbd has, for the
// scaling table of issue 17 (docs/benchmarks.md): N GPUs should finish
// N times the jobs per second of one (target >= 0.95 N).
//
//   scaling --server 127.0.0.1:50051 --kernel K.cu --jobs-per-gpu 16
//           [--wait-gpus N]
//
// Each job is a distinct source (the kernel with a numbered comment), so
// kbd neither serves it from its result cache nor merges it with another:
// every job is compiled, checked and timed. `--concurrency` callers (default
// 2 per GPU: one running, one compiling or waiting) each submit the next
// job and wait for its verdict. Prints one Markdown row (stdout) and
// optionally JSON; exits 1 when a job did not pass. bench/scaling.sh runs
// it against kbd with 1, 2, 4 ... local workers and builds the table.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/kbench_client.h"
#include "nlohmann/json.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Submits `source` (as kind `kind`) and waits for its verdict; an error
// unless it passed.
absl::Status RunOne(kbench::KbenchClient& client, const std::string& source,
                    bool submit) {
  kbench::v1::KernelRequest kernel;
  kernel.set_source(source);
  kernel.set_filename("kernel.cu");
  kbench::v1::JobResult result;
  if (submit) {
    kbench::v1::SubmitKernelRequest req;
    *req.mutable_kernel() = kernel;
    auto r = client.SubmitKernel(req);
    if (!r.ok()) return r.status();
    result = r->result();
  } else {
    kbench::v1::RunCorrectnessRequest req;
    *req.mutable_kernel() = kernel;
    auto r = client.RunCorrectness(req);
    if (!r.ok()) return r.status();
    result = r->result();
  }
  if (result.verdict() != kbench::v1::VERDICT_PASSED) {
    return absl::InternalError(absl::StrCat(
        kbench::v1::Verdict_Name(result.verdict()), ": ", result.message()));
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"scaling: one-GPU job throughput on every GPU of a kbd"};
  std::string server = "127.0.0.1:50051";
  std::string kernel_path;
  std::string json_path;
  std::string kind = "submit";
  int jobs_per_gpu = 16;
  int concurrency = 0;
  app.add_option("--server", server, "kbd address")->capture_default_str();
  app.add_option("--kernel", kernel_path, "Kernel file")->required();
  app.add_option("--jobs-per-gpu", jobs_per_gpu,
                 "Jobs to run per connected GPU (all distinct sources)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_option("--concurrency", concurrency,
                 "Jobs in flight at once (0: 2 per GPU)")
      ->check(CLI::Range(0, 1024));
  app.add_option("--kind", kind, "submit (timed) or check")
      ->check(CLI::IsMember({"submit", "check"}))
      ->capture_default_str();
  app.add_option("--json", json_path, "Also write the figures as JSON here");
  int wait_gpus = 0;
  app.add_option("--wait-gpus", wait_gpus,
                 "Wait (up to 5 min) until this many GPU workers are "
                 "connected before starting")
      ->check(CLI::Range(0, 1024));
  CLI11_PARSE(app, argc, argv);

  std::ifstream in(kernel_path);
  const std::string source(std::istreambuf_iterator<char>(in), {});
  if (source.empty()) {
    std::fprintf(stderr, "scaling: cannot read %s\n", kernel_path.c_str());
    return 2;
  }
  kbench::KbenchClient client(server, absl::Seconds(600));
  auto specs = client.GetGpuSpecs(kbench::v1::GetGpuSpecsRequest());
  for (const Clock::time_point t0 = Clock::now();
       (!specs.ok() || specs->gpus_size() < wait_gpus) &&
       SecondsSince(t0) < 300;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    specs = client.GetGpuSpecs(kbench::v1::GetGpuSpecsRequest());
  }
  if (!specs.ok() || specs->gpus_size() == 0) {
    std::fprintf(stderr, "scaling: no GPU worker at %s: %s\n", server.c_str(),
                 specs.ok() ? "none connected"
                            : std::string(specs.status().message()).c_str());
    return 2;
  }
  const int gpus = specs->gpus_size();
  const int jobs = jobs_per_gpu * gpus;
  const int callers = concurrency > 0 ? concurrency : 2 * gpus;
  const bool submit = kind == "submit";
  // Distinct from any earlier run's sources, so none is cached.
  const std::string salt =
      absl::StrFormat("%d", Clock::now().time_since_epoch().count());
  auto job_source = [&](int i) {
    return absl::StrCat(source, "\n// scaling ", salt, " job ", i, "\n");
  };

  // Warm-up: every worker's runner and kbd's compile children.
  {
    std::vector<std::thread> warm;
    warm.reserve(gpus);
    for (int g = 0; g < gpus; ++g) {
      warm.emplace_back(
          [&, g] { (void)RunOne(client, job_source(-1 - g), submit); });
    }
    for (std::thread& t : warm) t.join();
  }

  std::atomic<int> next{0};
  std::mutex mu;
  std::vector<double> latency_s;
  int failed = 0;
  std::string first_error;
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> threads;
  threads.reserve(callers);
  for (int c = 0; c < callers; ++c) {
    threads.emplace_back([&] {
      for (int i = next++; i < jobs; i = next++) {
        const Clock::time_point t0 = Clock::now();
        const absl::Status s = RunOne(client, job_source(i), submit);
        const double took = SecondsSince(t0);
        std::lock_guard<std::mutex> lock(mu);
        latency_s.push_back(took);
        if (!s.ok()) {
          ++failed;
          if (first_error.empty()) first_error = std::string(s.message());
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double wall_s = SecondsSince(start);
  const double jobs_per_s = jobs / wall_s;

  std::printf(
      "| GPUs | jobs (%s) | in flight | wall (s) | jobs/s | jobs/s per GPU | "
      "median job (s) | failed |\n",
      kind.c_str());
  std::printf("|---|---|---|---|---|---|---|---|\n");
  std::printf("| %d | %d | %d | %.2f | %.2f | %.2f | %.2f | %d |\n", gpus, jobs,
              callers, wall_s, jobs_per_s, jobs_per_s / gpus, Median(latency_s),
              failed);
  if (failed > 0) {
    std::fprintf(stderr, "scaling: %d of %d jobs did not pass; first: %s\n",
                 failed, jobs, first_error.c_str());
  }
  if (!json_path.empty()) {
    std::ofstream(json_path)
        << nlohmann::json{{"gpus", gpus},
                          {"jobs", jobs},
                          {"kind", kind},
                          {"in_flight", callers},
                          {"wall_s", wall_s},
                          {"jobs_per_s", jobs_per_s},
                          {"failed", failed},
                          {"median_job_s", Median(latency_s)},
                          {"gpu", specs->gpus(0).spec().name()}}
               .dump(2)
        << "\n";
  }
  return failed > 0 ? 1 : 0;
}
