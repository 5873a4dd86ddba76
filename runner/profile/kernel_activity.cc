#include "runner/profile/kernel_activity.h"

#include <cupti.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "runner/device/cuda_status.h"
#include "spdlog/spdlog.h"

namespace kbench {
namespace {

constexpr size_t kBufferBytes = 4 << 20;

std::mutex& Mu() {
  static std::mutex mu;
  return mu;
}

std::vector<KernelActivity::Record>& Records() {
  static std::vector<KernelActivity::Record> records;
  return records;
}

// Records CUPTI dropped since Start (its buffers were full).
size_t& Dropped() {
  static size_t dropped = 0;
  return dropped;
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size,
                              size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI BufferCompleted(CUcontext ctx, uint32_t stream_id,
                              uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  std::lock_guard<std::mutex> lock(Mu());
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) ==
      CUPTI_SUCCESS) {
    Dropped() += dropped;
  }
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
        record->kind != CUPTI_ACTIVITY_KIND_KERNEL) {
      continue;
    }
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    KernelActivity::Record r;
    r.name = k->name != nullptr ? k->name : "";
    r.start_ns = k->start;
    r.end_ns = k->end;
    r.submitted_ns = k->submitted;
    r.device_id = k->deviceId;
    r.stream_id = k->streamId;
    Records().push_back(std::move(r));
  }
  std::free(buffer);
}

}  // namespace

KernelActivity::~KernelActivity() {
  if (started_) cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

CUptiResult KernelActivity::Registered() {
  // Once per process: CUPTI keeps the callbacks.
  static const CUptiResult registered =
      cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
  return registered;
}

bool KernelActivity::ToolAttached() {
  return std::getenv("CUDA_INJECTION64_PATH") != nullptr ||
         Registered() == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
}

absl::StatusOr<uint32_t> KernelActivity::StreamId(cudaStream_t stream) {
  uint32_t id = 0;
  // The context is ignored for a stream other than the NULL stream.
  RETURN_IF_ERROR(CuptiStatus(
      cuptiGetStreamIdEx(nullptr, reinterpret_cast<CUstream>(stream),
                         /*perThreadStream=*/0, &id),
      "CUPTI naming a stream"));
  return id;
}

absl::Status KernelActivity::Start() {
  // Under Nsight Compute (or another injected CUDA tool) CUPTI belongs to
  // the tool; as the counter profiler and the stream blocker do, kernel
  // activity stands aside rather than compete for it. A tool that leaves
  // the variable unset in a child (ncu --target-processes all did so for
  // the runner, H200 2026-12-05) makes the registration below fail with
  // CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED instead: either way the
  // caller goes on without kernel times.
  if (std::getenv("CUDA_INJECTION64_PATH") != nullptr) {
    tool_attached_ = true;
    return absl::UnavailableError(
        "a CUDA tool is attached to the runner (CUDA_INJECTION64_PATH is "
        "set), so CUPTI's kernel activity is left to it");
  }
  const CUptiResult registered = Registered();
  if (absl::Status s = CuptiStatus(registered, "CUPTI registering buffers");
      !s.ok()) {
    tool_attached_ =
        registered == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    return s;
  }
  {
    std::lock_guard<std::mutex> lock(Mu());
    Records().clear();
    Dropped() = 0;
  }
  // The `submitted` stamps: a span then starts where ncu's does. Without
  // them the span starts at the first kernel's start (0.5 us later).
  if (cuptiActivityEnableLatencyTimestamps(1) != CUPTI_SUCCESS) {
    static std::once_flag once;
    std::call_once(once, [] {
      spdlog::info(
          "CUPTI latency timestamps unavailable: GPU spans start at "
          "the first kernel's start");
    });
  }
  if (absl::Status s = CuptiStatus(
          cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
          "CUPTI enabling kernel activity");
      !s.ok()) {
    return s;
  }
  started_ = true;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<KernelActivity::Record>> KernelActivity::Stop() {
  if (!started_) return absl::FailedPreconditionError("not started");
  started_ = false;
  const CUptiResult disabled =
      cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  const CUptiResult flushed =
      cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (absl::Status s = CuptiStatus(disabled, "CUPTI disabling kernel activity");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CuptiStatus(flushed, "CUPTI flushing activity");
      !s.ok()) {
    return s;
  }
  std::vector<Record> out;
  {
    std::lock_guard<std::mutex> lock(Mu());
    out.swap(Records());
    dropped_ = Dropped();
  }
  std::stable_sort(
      out.begin(), out.end(),
      [](const Record& a, const Record& b) { return a.start_ns < b.start_ns; });
  return out;
}

namespace {

// Whether `r`'s submitted stamp marks the GPU taking its launch: there is
// one, and it is at most kMaxFrontEndNs before the kernel's start.
bool FrontEndStamped(const KernelActivity::Record& r) {
  return r.submitted_ns > 0 && r.submitted_ns <= r.start_ns &&
         r.start_ns - r.submitted_ns <= kMaxFrontEndNs;
}

// The window of one run: from the GPU taking its first launch (see
// RunSpansUs) to its last kernel's end.
RunWindow RunWindowOf(const KernelActivity::Record* const* run, int n,
                      bool from_submitted) {
  auto taken = [from_submitted](const KernelActivity::Record& r) {
    return from_submitted && FrontEndStamped(r) ? r.submitted_ns : r.start_ns;
  };
  RunWindow w{taken(*run[0]), run[0]->end_ns};
  for (int j = 1; j < n; ++j) {
    w.start_ns = std::min(w.start_ns, taken(*run[j]));
    w.end_ns = std::max(w.end_ns, run[j]->end_ns);
  }
  return w;
}

// The same as a span, in us.
double RunSpanUs(const KernelActivity::Record* const* run, int n,
                 bool from_submitted) {
  const RunWindow w = RunWindowOf(run, n, from_submitted);
  return (w.end_ns - w.start_ns) * 1e-3;
}

}  // namespace

std::vector<double> RunSpansUs(
    const std::vector<KernelActivity::Record>& records,
    const std::function<bool(const std::string&)>& keep, int launches_per_run,
    int skip_runs, bool from_submitted) {
  std::vector<const KernelActivity::Record*> mine;
  for (const KernelActivity::Record& r : records) {
    if (keep(r.name)) mine.push_back(&r);
  }
  if (launches_per_run <= 0 || mine.empty() ||
      mine.size() % launches_per_run != 0) {
    return {};
  }
  std::vector<double> runs;
  for (size_t i = 0; i < mine.size(); i += launches_per_run) {
    runs.push_back(RunSpanUs(&mine[i], launches_per_run, from_submitted));
  }
  if (static_cast<int>(runs.size()) <= skip_runs) return {};
  runs.erase(runs.begin(), runs.begin() + skip_runs);
  return runs;
}

namespace {

// The records of `order`'s runs, the harness's left out, when they add up
// to those runs; else empty, with *why set.
std::vector<const KernelActivity::Record*> ScheduledRecords(
    const std::vector<KernelActivity::Record>& records,
    const std::vector<int>& order, const std::vector<int>& kernels_per_run,
    std::string* why) {
  std::vector<const KernelActivity::Record*> mine;
  for (const KernelActivity::Record& r : records) {
    if (!IsHarnessKernel(r.name)) mine.push_back(&r);
  }
  size_t expected = 0;
  for (int w : order) {
    if (w < 0 || static_cast<size_t>(w) >= kernels_per_run.size() ||
        kernels_per_run[w] <= 0) {
      *why = absl::StrCat("run of workload ", w, " with no kernel count");
      return {};
    }
    expected += kernels_per_run[w];
  }
  if (mine.size() != expected || order.empty()) {
    *why = absl::StrFormat(
        "CUPTI recorded %d kernels besides the harness's, the %d runs timed "
        "launch %d",
        mine.size(), order.size(), expected);
    return {};
  }
  why->clear();
  return mine;
}

}  // namespace

std::vector<std::vector<double>> ScheduledSpansUs(
    const std::vector<KernelActivity::Record>& records,
    const std::vector<int>& order, const std::vector<int>& kernels_per_run,
    int skip_runs, bool from_submitted, std::string* why) {
  const size_t nw = kernels_per_run.size();
  std::vector<std::vector<double>> spans(nw);
  const std::vector<const KernelActivity::Record*> mine =
      ScheduledRecords(records, order, kernels_per_run, why);
  if (mine.empty()) return spans;
  std::vector<int> seen(nw, 0);
  size_t at = 0;
  for (int w : order) {
    const int n = kernels_per_run[w];
    if (seen[w]++ >= skip_runs) {
      spans[w].push_back(RunSpanUs(&mine[at], n, from_submitted));
    }
    at += n;
  }
  for (size_t w = 0; w < nw; ++w) {
    if (spans[w].empty()) {
      *why = absl::StrCat("workload ", w, " ran no more than its ", skip_runs,
                          " warm-up runs");
      return std::vector<std::vector<double>>(nw);
    }
  }
  return spans;
}

std::vector<RunWindow> ScheduledWindows(
    const std::vector<KernelActivity::Record>& records,
    const std::vector<int>& order, const std::vector<int>& kernels_per_run,
    bool from_submitted, std::string* why) {
  const std::vector<const KernelActivity::Record*> mine =
      ScheduledRecords(records, order, kernels_per_run, why);
  if (mine.empty()) return {};
  std::vector<RunWindow> windows;
  windows.reserve(order.size());
  size_t at = 0;
  for (int w : order) {
    windows.push_back(
        RunWindowOf(&mine[at], kernels_per_run[w], from_submitted));
    at += kernels_per_run[w];
  }
  return windows;
}

std::vector<RunPart> ScheduledPartsUs(
    const std::vector<KernelActivity::Record>& records,
    const std::vector<int>& order, const std::vector<int>& kernels_per_run,
    int skip_runs, int workload) {
  std::string why;
  const std::vector<const KernelActivity::Record*> mine =
      ScheduledRecords(records, order, kernels_per_run, &why);
  if (mine.empty() || workload < 0 ||
      static_cast<size_t>(workload) >= kernels_per_run.size()) {
    return {};
  }
  const int n = kernels_per_run[workload];
  std::vector<RunPart> parts;
  int seen = 0;
  size_t at = 0;
  for (int w : order) {
    const KernelActivity::Record* const* run = &mine[at];
    at += kernels_per_run[w];
    if (w != workload || seen++ < skip_runs) continue;
    if (parts.empty()) {
      parts.push_back({"front end", {}});
      for (int j = 0; j < n; ++j) {
        if (j > 0) parts.push_back({"gap", {}});
        parts.push_back({run[j]->name, {}});
      }
    }
    const KernelActivity::Record& first = *run[0];
    parts[0].us.push_back(FrontEndStamped(first)
                              ? (first.start_ns - first.submitted_ns) * 1e-3
                              : 0);
    for (int j = 0; j < n; ++j) {
      if (j > 0) {
        // Kernels of one run may overlap (another stream): a gap of 0.
        const uint64_t end = run[j - 1]->end_ns;
        parts[2 * j].us.push_back(
            run[j]->start_ns > end ? (run[j]->start_ns - end) * 1e-3 : 0);
      }
      parts[2 * j + 1].us.push_back(run[j]->duration_us());
    }
  }
  return parts;
}

std::string NoRunsReason(const std::vector<KernelActivity::Record>& records,
                         const std::function<bool(const std::string&)>& keep,
                         int launches_per_run, int skip_runs) {
  size_t kept = 0;
  for (const KernelActivity::Record& r : records) kept += keep(r.name) ? 1 : 0;
  return absl::StrFormat(
      "%d of CUPTI's %d kernel records matched, expected whole runs of %d "
      "launches beyond %d warm-up runs",
      kept, records.size(), launches_per_run, skip_runs);
}

bool IsHarnessKernel(const std::string& name) {
  // Harness kernels are C++ (mangled) names in runner/device/
  // harness_kernels.cu; a candidate's entry points are extern "C".
  for (const char* harness : {"ReadAllKernel", "BlockStreamKernel",
                              "ClockProbeKernel", "SpinForKernel"}) {
    if (absl::StrContains(name, harness)) return true;
  }
  return false;
}

}  // namespace kbench
