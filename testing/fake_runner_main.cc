// kb_fake_runner: a stand-in for kbrunner that speaks the runner protocol on
// fd 3 without a GPU, so the worker's process management, watchdog and crash
// handling are tested in CI. It never touches CUDA.
//
// Start-up: says hello with a fake GpuSpec ("kbench fake GPU (tests only)",
// sm_90, 132 SMs), unless KB_FAKE_RUNNER_FAIL_HELLO=1, in which case it
// prints a message to stderr (and a line to stdout) and exits with status 3.
//
// A job whose launch plan (RunnerJob.plan) fails the runner's check
// (contract/runner_job.h) gets the verdict kbrunner gives it: `error` when
// there is no plan, `rejected` when it does not fit the problem; so does a
// golden-kernel problem's job without the golden's cubin or plan (`error`).
// Otherwise each RunnerRequest behaves by the first marker found in the
// job's source:
//   FAKE_CRASH         prints a line to stdout, then raise(SIGSEGV).
//   FAKE_HANG          one progress message, then sleeps forever.
//   FAKE_SLOW_MS=<n>   progress every 100 ms for n ms, then passes.
//   FAKE_UNHEALTHY     verdict CRASHED with unhealthy=true, then exits 0.
//   FAKE_FAIL          verdict FAILED, one trial with max_abs_error 1.5.
//   FAKE_PRINTF=<n>    writes n bytes to stdout, then passes.
//   FAKE_GPU_BASES     (with any of the above that passes) the timing also
//                      has GPU-time and graph bases; the speedup's basis is
//                      GPU time.
//   (none)             progress "running (fake)", then passes.
// A job that spans GPUs (RunnerJob.world_size > 1) is refused as kbrunner
// refuses it when it is a profile (UNIMPLEMENTED); when it passes,
// its message names the ranks and the runner's CUDA_VISIBLE_DEVICES
// ("2 ranks (fake) on CUDA_VISIBLE_DEVICES=0,1"), which the worker sets.
// Passing results hold one TrialResult per shape of job.check_sets and, for
// SUBMIT and PROFILE jobs, a TimingReport with made-up positive numbers: the
// kernel's median is 10 us, or <n> us with the marker FAKE_KERNEL_US=<n>
// anywhere in the source (the reference's is 20 us); FLOPs and minimum bytes
// are the problem's at the timed shape. The fake GPU reports measured
// ceilings of 4000 GB/s and 60 TFLOP/s and a 5 us launch floor. PROFILE results
// also carry hardware counters (the naive kernel's, as read on an H200, L2 hit
// rate above 100% included), two reference kernels, and hot source lines on the
// source's first "+=", "for (" and "out[" code lines (70/20/10% of 1000
// samples). Those made-up results are in testing/fake_results.cc.
//
// `kb_fake_runner --topology FILE --device N` writes a RunnerTopology, as
// `kbrunner --topology` does, from KB_FAKE_TOPOLOGY: the host's GPU
// indices, comma-separated, each with "!" when it has no peer access
// ("0,1,2,3!": four GPUs, GPU 3 reaching none). Linked GPUs report rank 1
// and 100 GB/s. Without it: one GPU, no links.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/proto_io.h"
#include "contract/runner_job.h"
#include "kbench/v1/report.pb.h"
#include "kbench/v1/worker.pb.h"
#include "testing/fake_results.h"

namespace kbench {
namespace {

constexpr int kFd = 3;
constexpr char kLog[] =
    "kb_fake_runner: fake result (tests only); no kernel was run";

void Send(const v1::RunnerResponse& resp) {
  const absl::Status st = WriteMessage(kFd, resp);
  if (!st.ok()) {
    std::fprintf(stderr, "kb_fake_runner: %s\n", st.ToString().c_str());
    std::exit(1);
  }
}

void SendProgress(const std::string& detail) {
  v1::RunnerResponse resp;
  resp.mutable_progress()->set_detail(detail);
  Send(resp);
}

// Writes all of `data` to stdout (fd 1, unbuffered).
void WriteStdout(absl::string_view data) {
  while (!data.empty()) {
    const ssize_t n = write(1, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

// Handles one job; returns false when the runner must exit afterwards.
bool HandleJob(const v1::RunnerJob& job) {
  const absl::Time start = absl::Now();
  const std::string& src = job.source();
  v1::RunnerResponse resp;
  v1::JobResult* result = resp.mutable_result();
  bool keep_running = true;
  // As kbrunner does, before anything else: the plan kbd sent, checked,
  // and for a golden-kernel problem the golden's cubin and plan, which kbd
  // sends with every such job (GoldenKernelReference::Load).
  absl::Status checked = JobPlan(job).status();
  if (checked.ok() &&
      job.problem().reference() == v1::REFERENCE_OP_GOLDEN_KERNEL) {
    checked = job.golden_cubin().empty()
                  ? absl::FailedPreconditionError(
                        "the job carries no golden cubin; kbd compiles the "
                        "problem's golden kernel and sends it with every job")
                  : ProblemKernelPlan(job.golden_plan(), job.problem(),
                                      "its golden kernel")
                        .status();
  }
  const bool ranked = job.world_size() > 1;
  if (!checked.ok()) {
    const absl::Status& s = checked;
    result->set_verdict(s.code() == absl::StatusCode::kInvalidArgument
                            ? v1::VERDICT_REJECTED
                            : v1::VERDICT_ERROR);
    result->mutable_error()->set_code(static_cast<int>(s.code()));
    result->mutable_error()->set_message(std::string(s.message()));
    result->set_message(std::string(s.message()));
  } else if (absl::StrContains(src, "FAKE_CRASH")) {
    WriteStdout("kb_fake_runner: about to crash on purpose (FAKE_CRASH)\n");
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    // The default action, so that the process dies by the signal as a real
    // crash does, also in sanitizer builds (ASan catches SIGSEGV and exits
    // with status 1).
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
    _exit(99);  // Not reached.
  } else if (absl::StrContains(src, "FAKE_HANG")) {
    SendProgress("hanging (fake)");
    while (true) pause();
  } else if (const int64_t ms = MarkerValue(src, "FAKE_SLOW_MS="); ms >= 0) {
    for (int64_t t = 0; t < ms; t += 100) {
      SendProgress(absl::StrCat("slow (fake): ", t, "/", ms, " ms"));
      absl::SleepFor(absl::Milliseconds(std::min<int64_t>(100, ms - t)));
    }
    *result = PassResult(job);
  } else if (absl::StrContains(src, "FAKE_UNHEALTHY")) {
    result->set_verdict(v1::VERDICT_CRASHED);
    result->mutable_correctness()->set_passed(false);
    result->mutable_correctness()->set_message(
        "CUDA_ERROR_ILLEGAL_ADDRESS (fake)");
    resp.set_unhealthy(true);
    keep_running = false;
  } else if (absl::StrContains(src, "FAKE_FAIL")) {
    result->set_verdict(v1::VERDICT_FAILED);
    v1::CorrectnessReport* c = result->mutable_correctness();
    c->set_passed(false);
    c->set_trials_run(1);
    c->set_trials_passed(0);
    c->set_message("trial 1: max_abs_error 1.5 over tolerance (fake)");
    v1::TrialResult* t = c->add_trials();
    if (job.check_sets_size() > 0) {
      t->set_shape_set(job.check_sets(0).name());
      if (job.check_sets(0).shapes_size() > 0) {
        t->set_shape(job.check_sets(0).shapes(0).name());
      }
    }
    t->set_seed(job.seed());
    t->set_passed(false);
    t->set_max_abs_error(1.5);
    t->set_max_rel_error(0.75);
    t->set_mismatches(1);
    t->set_elements(1);
  } else if (const int64_t n = MarkerValue(src, "FAKE_PRINTF="); n >= 0) {
    std::string text;
    text.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      text.push_back((i % 64 == 63) ? '\n' : static_cast<char>('a' + i % 26));
    }
    WriteStdout(text);
    *result = PassResult(job);
  } else {
    SendProgress("running (fake)");
    *result = PassResult(job);
  }
  if (ranked && result->verdict() == v1::VERDICT_PASSED) {
    // What the worker gave a gang's runner, for the worker's tests.
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    result->set_message(absl::StrCat(job.world_size(),
                                     " ranks (fake) on CUDA_VISIBLE_DEVICES=",
                                     visible != nullptr ? visible : ""));
  }
  *result->mutable_gpu() = FakeSpec();
  result->set_runner_ms(absl::ToDoubleMilliseconds(absl::Now() - start));
  result->set_log(kLog);
  Send(resp);
  return keep_running;
}

// The fake `--topology FILE --device N`; see the header comment.
int FakeTopology(const std::string& path, int device) {
  v1::RunnerTopology topology;
  const char* env = std::getenv("KB_FAKE_TOPOLOGY");
  std::map<int, bool> gpus;  // Index -> has peer access.
  for (absl::string_view part :
       absl::StrSplit(env == nullptr ? "" : env, ',', absl::SkipEmpty())) {
    const bool none = absl::ConsumeSuffix(&part, "!");
    int index = 0;
    if (!absl::SimpleAtoi(part, &index)) return 2;
    gpus[index] = !none;
  }
  topology.set_device_count(std::max<int>(1, static_cast<int>(gpus.size())));
  for (const auto& [index, peer] : gpus) {
    if (index == device) continue;
    v1::GpuLink* link = topology.add_links();
    link->set_peer_gpu_index(index);
    const bool linked = peer && gpus.count(device) > 0 && gpus.at(device);
    link->set_peer_access(linked);
    link->set_performance_rank(linked ? 1 : 0);
    link->set_copy_gbps(linked ? 100 : 0);
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  return out && topology.SerializeToOstream(&out) ? 0 : 4;
}

int Main(int argc, char** argv) {
  std::string topology;
  int device = 0;
  for (int i = 1; i + 1 < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--topology") topology = argv[i + 1];
    if (arg == "--device") (void)absl::SimpleAtoi(argv[i + 1], &device);
  }
  if (!topology.empty()) return FakeTopology(topology, device);
  const char* fail = std::getenv("KB_FAKE_RUNNER_FAIL_HELLO");
  if (fail != nullptr && std::string(fail) == "1") {
    WriteStdout("kb_fake_runner: failing start-up on purpose\n");
    std::fprintf(stderr,
                 "kb_fake_runner: no CUDA device (fake failure: "
                 "KB_FAKE_RUNNER_FAIL_HELLO=1)\n");
    return 3;
  }
  v1::RunnerResponse hello;
  *hello.mutable_hello()->mutable_spec() = FakeSpec();
  hello.mutable_hello()->set_startup_ms(1.0);
  Send(hello);
  while (true) {
    v1::RunnerRequest request;
    const absl::Status st = ReadMessage(kFd, &request);
    if (absl::IsOutOfRange(st)) return 0;  // The worker closed the socket.
    if (!st.ok()) {
      std::fprintf(stderr, "kb_fake_runner: %s\n", st.ToString().c_str());
      return 1;
    }
    if (!HandleJob(request.job())) return 0;
  }
}

}  // namespace
}  // namespace kbench

int main(int argc, char** argv) { return kbench::Main(argc, argv); }
