// kbrunner: the isolated child process of kbworker that owns one GPU. It
// creates the CUDA context once, says hello (the GPU's facts) on fd 3, then
// runs one RunnerJob at a time, sending progress and the result on fd 3.
// After a sticky CUDA error it answers, marks itself unhealthy and exits;
// the worker starts a fresh one. Device printf goes to stdout, which the
// worker captures.
//
// One-shot mode (`kbrunner --oneshot JOB.pb RESULT.pb`): reads one
// serialized RunnerJob from JOB.pb, runs it as given (no ceilings, no
// socket) and writes the serialized JobResult to RESULT.pb; exit status 0
// when the kernel passed, 1 when it did not, 2-4 for harness failures. The
// worker runs sanitize jobs this way under compute-sanitizer; it is also a
// plain process for Nsight Compute, e.g.
//   ncu --metrics gpu__time_duration.sum kbrunner --oneshot job.pb out.pb
//
// Line-loads mode (`kbrunner --line-loads-wait DIR`): the runner's own
// child for the global loads per source line of a profile
// (runner/profile/line_loads.h): it creates its context, then DIR/ready,
// and waits for a line on stdin; then DIR/lines.pb gets the ProfileReport
// of DIR/job.pb, with the reason in `missing` when it fails (exit status
// 1). By hand: `echo go | kbrunner --line-loads-wait DIR`.
//
// A problem that spans GPUs runs rank r on device --device + r (kbworker's
// gang leader lists the gang's GPUs in CUDA_VISIBLE_DEVICES), or on the
// devices --rank-devices lists ("0,0": both ranks on one GPU, for tests).
//
// Topology mode (`kbrunner --topology FILE --device N`): writes the
// serialized RunnerTopology of GPU N (its links to every other visible GPU,
// runner/device/topology.h) to FILE and exits; kbworker runs it at start
// with all of the host's GPUs visible.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <vector>

#include "CLI/CLI.hpp"
#include "base/logging.h"
#include "base/proto_io.h"
#include "kbench/v1/worker.pb.h"
#include "runner/device/ceilings.h"
#include "runner/device/device_context.h"
#include "runner/device/topology.h"
#include "runner/evaluator.h"
#include "runner/profile/line_loads.h"
#include "spdlog/spdlog.h"

namespace {

// Runs the job in `paths[0]` and writes its result to `paths[1]`.
int RunOneShot(kbench::DeviceContext* ctx,
               const std::vector<std::string>& paths,
               const std::vector<int>& rank_devices) {
  kbench::v1::RunnerJob job;
  {
    std::ifstream in(paths[0], std::ios::binary);
    if (!in || !job.ParseFromIstream(&in)) {
      spdlog::error("--oneshot: cannot read a RunnerJob from {}", paths[0]);
      return 2;
    }
  }
  auto evaluator = kbench::Evaluator::Create(ctx);
  if (!evaluator.ok()) {
    spdlog::error("{}", std::string(evaluator.status().message()));
    return 3;
  }
  (*evaluator)->set_rank_devices(rank_devices);
  bool unhealthy = false;
  const kbench::v1::JobResult result =
      (*evaluator)
          ->Run(
              job, [](const std::string& d) { spdlog::debug("{}", d); },
              &unhealthy);
  std::fflush(stdout);
  std::ofstream out(paths[1], std::ios::binary | std::ios::trunc);
  if (!out || !result.SerializeToOstream(&out)) {
    spdlog::error("--oneshot: cannot write the result to {}", paths[1]);
    return 4;
  }
  spdlog::info("job {}: {}", job.job_id(),
               kbench::v1::Verdict_Name(result.verdict()));
  return result.verdict() == kbench::v1::VERDICT_PASSED ? 0 : 1;
}

// Topology mode: 0 when FILE was written, 3 when measuring failed, 4 when
// FILE could not be written.
int WriteTopology(int device, const std::string& path) {
  kbench::TopologyOptions options;
  options.device = device;
  absl::StatusOr<kbench::v1::RunnerTopology> topology =
      kbench::MeasureTopology(options);
  if (!topology.ok()) {
    spdlog::error("--topology: {}", std::string(topology.status().message()));
    return 3;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !topology->SerializeToOstream(&out)) {
    spdlog::error("--topology: cannot write {}", path);
    return 4;
  }
  for (const kbench::v1::GpuLink& l : topology->links()) {
    spdlog::info("GPU {} to GPU {}: peer access {}, rank {}, {:.0f} GB/s",
                 device, l.peer_gpu_index(), l.peer_access() ? "yes" : "no",
                 l.performance_rank(), l.copy_gbps());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kbrunner: runs kernels for kbworker on one GPU"};
  int device = 0;
  int fd = 3;
  std::string log_level = "info";
  std::vector<std::string> oneshot;
  app.add_option("--oneshot", oneshot,
                 "JOB.pb RESULT.pb: run one serialized RunnerJob and write "
                 "its JobResult, then exit (for compute-sanitizer and ncu)")
      ->expected(2);
  std::string line_loads;
  app.add_option("--line-loads-wait", line_loads,
                 "DIR: the runner's line-loads child: create the context, "
                 "then DIR/ready; on a line on stdin, global loads per "
                 "source line of DIR/job.pb into DIR/lines.pb, then exit");
  std::string topology;
  app.add_option("--topology", topology,
                 "FILE: write the links of --device to the other visible "
                 "GPUs (a serialized RunnerTopology) to FILE, then exit");
  app.add_option("--device", device, "CUDA device ordinal")
      ->capture_default_str();
  std::vector<int> rank_devices;
  app.add_option("--rank-devices", rank_devices,
                 "For a problem that spans GPUs: the device of each rank "
                 "(default: rank r on device --device + r, as kbworker lists "
                 "a gang's GPUs); 0,0 runs both ranks of a two-GPU problem "
                 "on one GPU, for tests")
      ->delimiter(',');
  app.add_option("--protocol-fd", fd, "File descriptor of the worker socket")
      ->capture_default_str();
  app.add_option("--log-level", log_level, "Log level")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  kbench::InitLogging("kbrunner", log_level);
  if (!topology.empty()) return WriteTopology(device, topology);

  const auto t0 = std::chrono::steady_clock::now();
  kbench::DeviceContext::Options options;
  options.device = device;
  // The line-loads child runs no reference: no cuBLAS handles to create.
  options.blas = line_loads.empty();
  auto ctx = kbench::DeviceContext::Create(options);
  if (!ctx.ok()) {
    spdlog::error("{}", std::string(ctx.status().message()));
    return 3;
  }
  if (!oneshot.empty()) return RunOneShot(ctx->get(), oneshot, rank_devices);
  if (!line_loads.empty()) {
    spdlog::info("line loads: context ready in {:.0f} ms",
                 std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - t0)
                     .count());
    return kbench::ServeLineLoads(ctx->get(), line_loads);
  }
  // Ceilings for get_gpu_specs and speed-of-light figures, once per runner.
  if (absl::Status s =
          kbench::MeasureCeilings(ctx->get(), (*ctx)->mutable_spec());
      !s.ok()) {
    spdlog::warn("measuring the GPU's ceilings: {}", std::string(s.message()));
  }
  auto evaluator = kbench::Evaluator::Create(ctx->get());
  if (!evaluator.ok()) {
    spdlog::error("{}", std::string(evaluator.status().message()));
    return 3;
  }
  (*evaluator)->set_rank_devices(rank_devices);
  kbench::v1::RunnerResponse hello;
  *hello.mutable_hello()->mutable_spec() = (*ctx)->spec();
  hello.mutable_hello()->set_startup_ms(
      std::chrono::duration<double, std::milli>(
          std::chrono::steady_clock::now() - t0)
          .count());
  if (!kbench::WriteMessage(fd, hello).ok()) return 4;
  spdlog::info(
      "ready on {} ({}) in {:.0f} ms; measured {:.0f} GB/s copy, {:.1f} "
      "FP32 TFLOP/s",
      (*ctx)->spec().name(), (*ctx)->spec().arch(), hello.hello().startup_ms(),
      (*ctx)->spec().measured_copy_gbps(),
      (*ctx)->spec().measured_fp32_tflops());

  while (true) {
    kbench::v1::RunnerRequest request;
    const absl::Status read = kbench::ReadMessage(fd, &request);
    if (absl::IsOutOfRange(read)) return 0;  // The worker closed the socket.
    if (!read.ok()) {
      spdlog::error("reading a request: {}", std::string(read.message()));
      return 4;
    }
    auto progress = [fd](const std::string& detail) {
      kbench::v1::RunnerResponse r;
      r.mutable_progress()->set_detail(detail);
      (void)kbench::WriteMessage(fd, r);
    };
    bool unhealthy = false;
    kbench::v1::RunnerResponse response;
    *response.mutable_result() =
        (*evaluator)->Run(request.job(), progress, &unhealthy);
    response.set_unhealthy(unhealthy);
    std::fflush(stdout);  // Device printf output, for the worker to capture.
    if (!kbench::WriteMessage(fd, response).ok()) return 4;
    if (unhealthy) {
      spdlog::warn("CUDA context is unusable after: {}",
                   std::string(response.result().message()));
      return 0;
    }
  }
}
