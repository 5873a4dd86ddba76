#include "runner/profile/counter_profiler.h"

#include <cuda_runtime.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <chrono>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "runner/device/cuda_status.h"
#include "spdlog/spdlog.h"

// CUPTI's parameter structs are set up as CUPTI's samples do: the size
// first, every other member zero, then the members that matter.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace kbench {
namespace {

void FreeHost(CUpti_Profiler_Host_Object* host) {
  if (host == nullptr) return;
  CUpti_Profiler_Host_Deinitialize_Params p = {
      CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
  p.pHostObject = host;
  cuptiProfilerHostDeinitialize(&p);
}

double MsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t)
      .count();
}

std::vector<const char*> CStrings(const std::vector<std::string>& v) {
  std::vector<const char*> out;
  out.reserve(v.size());
  for (const std::string& s : v) out.push_back(s.c_str());
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CounterProfiler>> CounterProfiler::Create(
    DeviceContext* ctx, const Options& options) {
  const char* injection = std::getenv("CUDA_INJECTION64_PATH");
  if (injection != nullptr && *injection != '\0') {
    return absl::UnavailableError(
        "another profiler is attached to the runner (CUDA_INJECTION64_PATH is "
        "set, e.g. by ncu or nsys); it owns the performance counters");
  }
  std::unique_ptr<CounterProfiler> p(new CounterProfiler(ctx, options));
  RETURN_IF_ERROR(p->Init());
  return p;
}

CounterProfiler::~CounterProfiler() {
  for (auto& [key, config] : configs_) FreeHost(config->host);
}

absl::Status CounterProfiler::Init() {
  CUpti_Profiler_Initialize_Params init = {
      CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  CUPTI_RETURN_IF_ERROR(cuptiProfilerInitialize(&init),
                        "initializing the CUPTI profiler");
  int device = 0;
  CUDA_RETURN_IF_ERROR(cudaGetDevice(&device), "reading the device");
  CUpti_Device_GetChipName_Params chip = {
      CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  chip.deviceIndex = static_cast<size_t>(device);
  CUPTI_RETURN_IF_ERROR(cuptiDeviceGetChipName(&chip), "reading the chip name");
  chip_ = chip.pChipName;

  CUcontext cu = nullptr;
  ctx_->driver().CtxGetCurrent(&cu);
  CUpti_Profiler_GetCounterAvailability_Params avail = {
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  avail.ctx = cu;
  CUPTI_RETURN_IF_ERROR(cuptiProfilerGetCounterAvailability(&avail),
                        "reading counter availability");
  availability_.assign(avail.counterAvailabilityImageSize, 0);
  avail.pCounterAvailabilityImage = availability_.data();
  CUPTI_RETURN_IF_ERROR(cuptiProfilerGetCounterAvailability(&avail),
                        "reading counter availability");
  spdlog::debug("CUPTI range profiler ready for chip {}", chip_);
  return absl::OkStatus();
}

absl::StatusOr<CUpti_Profiler_Host_Object*> CounterProfiler::NewHost(
    const std::vector<std::string>& metrics) {
  CUpti_Profiler_Host_Initialize_Params init = {
      CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  init.pChipName = chip_.c_str();
  init.pCounterAvailabilityImage = availability_.data();
  CUPTI_RETURN_IF_ERROR(cuptiProfilerHostInitialize(&init),
                        "initializing the CUPTI profiler host");
  std::vector<const char*> names = CStrings(metrics);
  CUpti_Profiler_Host_ConfigAddMetrics_Params add = {
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  add.pHostObject = init.pHostObject;
  add.ppMetricNames = names.data();
  add.numMetrics = names.size();
  const CUptiResult r = cuptiProfilerHostConfigAddMetrics(&add);
  if (r != CUPTI_SUCCESS) {
    FreeHost(init.pHostObject);
    return CuptiStatus(
        r, absl::StrCat("adding metrics (", absl::StrJoin(metrics, ", "), ")"));
  }
  return init.pHostObject;
}

absl::StatusOr<CounterProfiler::Config*> CounterProfiler::ConfigFor(
    const std::vector<std::string>& metrics) {
  const std::string key = absl::StrJoin(metrics, ",");
  auto it = configs_.find(key);
  if (it != configs_.end()) return it->second.get();
  auto config = std::make_unique<Config>();
  absl::StatusOr<CUpti_Profiler_Host_Object*> host = NewHost(metrics);
  if (host.ok()) {
    config->metrics = metrics;
  } else {
    // Find the refused metrics one by one; keep the rest.
    spdlog::warn("{}; checking the metrics one by one",
                 std::string(host.status().message()));
    for (const std::string& m : metrics) {
      absl::StatusOr<CUpti_Profiler_Host_Object*> one = NewHost({m});
      if (one.ok()) {
        FreeHost(*one);
        config->metrics.push_back(m);
      } else {
        config->dropped.insert(m);
      }
    }
    if (config->metrics.empty()) return host.status();
    host = NewHost(config->metrics);
    if (!host.ok()) return host.status();
    spdlog::warn("metrics not available on {}: {}", chip_,
                 absl::StrJoin(config->dropped, ", "));
  }
  config->host = *host;
  CUpti_Profiler_Host_GetConfigImageSize_Params size = {
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  size.pHostObject = config->host;
  absl::Status s = CuptiStatus(cuptiProfilerHostGetConfigImageSize(&size),
                               "sizing the config image");
  if (s.ok()) {
    config->image.assign(size.configImageSize, 0);
    CUpti_Profiler_Host_GetConfigImage_Params image = {
        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    image.pHostObject = config->host;
    image.pConfigImage = config->image.data();
    image.configImageSize = config->image.size();
    s = CuptiStatus(cuptiProfilerHostGetConfigImage(&image),
                    "building the config image");
  }
  if (s.ok()) {
    CUpti_Profiler_Host_GetNumOfPasses_Params passes = {
        CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    passes.pConfigImage = config->image.data();
    passes.configImageSize = config->image.size();
    s = CuptiStatus(cuptiProfilerHostGetNumOfPasses(&passes),
                    "counting replay passes");
    config->passes = static_cast<int>(passes.numOfPasses);
  }
  if (!s.ok()) {
    FreeHost(config->host);
    return s;
  }
  spdlog::debug("config image for {} metrics: {} bytes, {} passes",
                config->metrics.size(), config->image.size(), config->passes);
  Config* raw = config.get();
  configs_[key] = std::move(config);
  return raw;
}

absl::StatusOr<CounterProfiler::Collection> CounterProfiler::Collect(
    const std::vector<std::string>& metrics,
    const std::function<absl::Status()>& before_pass, int before_pass_kernels,
    const std::function<absl::Status()>& enqueue, int kernels) {
  const bool user = options_.replay == Options::Replay::kUser;
  const int skipped = user && before_pass ? before_pass_kernels : 0;
  if (kernels > 0) {
    // One range to spare: a run that fills it launched more than expected
    // (CUPTI drops the ranges past the room silently).
    bool full = false;
    absl::StatusOr<Collection> c = CollectOnce(
        metrics, before_pass, skipped, enqueue, skipped + kernels + 1, &full);
    if (!c.ok() || !full) return c;
    spdlog::warn(
        "more kernels than the {} expected per run; profiling again with room "
        "for {}",
        kernels, options_.max_ranges - skipped);
  }
  bool full = false;
  absl::StatusOr<Collection> c = CollectOnce(
      metrics, before_pass, skipped, enqueue, options_.max_ranges, &full);
  if (c.ok() && full) {
    return absl::ResourceExhaustedError(
        absl::StrCat("more than ", options_.max_ranges - skipped,
                     " kernels in one run: too many to read their counters"));
  }
  return c;
}

absl::StatusOr<CounterProfiler::Collection> CounterProfiler::CollectOnce(
    const std::vector<std::string>& metrics,
    const std::function<absl::Status()>& before_pass, int skipped,
    const std::function<absl::Status()>& enqueue, int max_ranges, bool* full) {
  const auto t0 = std::chrono::steady_clock::now();
  PhaseTimes times;
  ASSIGN_OR_RETURN(Config * config, ConfigFor(metrics));
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(ctx_->stream()),
                       "before profiling");

  CUcontext cu = nullptr;
  ctx_->driver().CtxGetCurrent(&cu);
  CUpti_RangeProfiler_Enable_Params enable = {
      CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
  enable.ctx = cu;
  CUPTI_RETURN_IF_ERROR(cuptiRangeProfilerEnable(&enable),
                        "enabling the range profiler");
  CUpti_RangeProfiler_Object* object = enable.pRangeProfilerObject;
  struct Disable {
    CUpti_RangeProfiler_Object* object;
    ~Disable() {
      CUpti_RangeProfiler_Disable_Params p = {
          CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
      p.pRangeProfilerObject = object;
      cuptiRangeProfilerDisable(&p);
    }
  } disable{object};
  times.enable_ms = MsSince(t0);

  Collection out;
  out.dropped = config->dropped;
  RETURN_IF_ERROR(Session(object, *config, before_pass, skipped, enqueue,
                          max_ranges, &out, full, &times));
  if (*full) return out;
  out.wall_ms = MsSince(t0);
  spdlog::info(
      "counters: {} metrics, {} passes, {} ranges, in {:.0f} ms (enable "
      "{:.0f}, image {:.0f}, config {:.0f}; passes: start {:.0f}, launch "
      "{:.0f}, sync {:.0f}, stop {:.0f}; decode {:.0f})",
      config->metrics.size(), out.passes, out.ranges.size(), out.wall_ms,
      times.enable_ms, times.image_ms, times.config_ms, times.start_ms,
      times.launch_ms, times.sync_ms, times.stop_ms, times.decode_ms);
  return out;
}

absl::Status CounterProfiler::Session(
    CUpti_RangeProfiler_Object* object, const Config& config,
    const std::function<absl::Status()>& before_pass, int skipped,
    const std::function<absl::Status()>& enqueue, int max_ranges,
    Collection* out, bool* full, PhaseTimes* times) {
  std::vector<uint8_t> data;
  RETURN_IF_ERROR(SetUp(object, config, max_ranges, &data, times));
  RETURN_IF_ERROR(RunPasses(object, config, before_pass, enqueue, out, times));

  const auto t = std::chrono::steady_clock::now();
  CUpti_RangeProfiler_DecodeData_Params decode = {
      CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  decode.pRangeProfilerObject = object;
  CUPTI_RETURN_IF_ERROR(cuptiRangeProfilerDecodeData(&decode),
                        "decoding the counter data");
  CUpti_RangeProfiler_GetCounterDataInfo_Params info = {
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = data.data();
  info.counterDataImageSize = data.size();
  CUPTI_RETURN_IF_ERROR(cuptiRangeProfilerGetCounterDataInfo(&info),
                        "reading the counter data");
  if (decode.numOfRangeDropped > 0 ||
      info.numTotalRanges >= static_cast<size_t>(max_ranges)) {
    *full = true;
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(ReadRanges(config, data, info.numTotalRanges,
                             static_cast<size_t>(skipped), out));
  times->decode_ms += MsSince(t);
  return absl::OkStatus();
}

absl::Status CounterProfiler::SetUp(CUpti_RangeProfiler_Object* object,
                                    const Config& config, int max_ranges,
                                    std::vector<uint8_t>* data,
                                    PhaseTimes* times) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<const char*> names = CStrings(config.metrics);
  CUpti_RangeProfiler_GetCounterDataSize_Params size = {
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  size.pRangeProfilerObject = object;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = static_cast<size_t>(max_ranges);
  size.maxNumRangeTreeNodes = static_cast<uint32_t>(max_ranges);
  CUPTI_RETURN_IF_ERROR(cuptiRangeProfilerGetCounterDataSize(&size),
                        "sizing the counter data image");
  data->assign(size.counterDataSize, 0);
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params init = {
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  init.pRangeProfilerObject = object;
  init.counterDataSize = data->size();
  init.pCounterData = data->data();
  CUPTI_RETURN_IF_ERROR(cuptiRangeProfilerCounterDataImageInitialize(&init),
                        "initializing the counter data image");
  times->image_ms += MsSince(t0);
  const auto t1 = std::chrono::steady_clock::now();

  CUpti_RangeProfiler_SetConfig_Params set = {
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  set.pRangeProfilerObject = object;
  set.configSize = config.image.size();
  set.pConfig = config.image.data();
  set.counterDataImageSize = data->size();
  set.pCounterDataImage = data->data();
  set.range = CUPTI_AutoRange;
  set.replayMode = options_.replay == Options::Replay::kUser
                       ? CUPTI_UserReplay
                       : CUPTI_KernelReplay;
  set.maxRangesPerPass = static_cast<size_t>(max_ranges);
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  CUPTI_RETURN_IF_ERROR(cuptiRangeProfilerSetConfig(&set),
                        "configuring the range profiler");
  times->config_ms += MsSince(t1);
  return absl::OkStatus();
}

absl::Status CounterProfiler::RunPasses(
    CUpti_RangeProfiler_Object* object, const Config& config,
    const std::function<absl::Status()>& before_pass,
    const std::function<absl::Status()>& enqueue, Collection* out,
    PhaseTimes* times) {
  const bool user = options_.replay == Options::Replay::kUser;
  cudaStream_t stream = ctx_->stream();
  const int max_iterations = config.passes + 2;
  bool all_submitted = false;
  int passes = 0;
  for (int pass = 0; pass < max_iterations && !all_submitted; ++pass) {
    CUpti_RangeProfiler_Start_Params start = {
        CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    start.pRangeProfilerObject = object;
    auto t = std::chrono::steady_clock::now();
    CUPTI_RETURN_IF_ERROR(cuptiRangeProfilerStart(&start),
                          "starting the range profiler");
    times->start_ms += MsSince(t);
    t = std::chrono::steady_clock::now();
    absl::Status queued = absl::OkStatus();
    if (user && before_pass) queued = before_pass();
    if (queued.ok()) queued = enqueue();
    times->launch_ms += MsSince(t);
    t = std::chrono::steady_clock::now();
    const cudaError_t err = cudaStreamSynchronize(stream);
    times->sync_ms += MsSince(t);
    t = std::chrono::steady_clock::now();
    CUpti_RangeProfiler_Stop_Params stop = {
        CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    stop.pRangeProfilerObject = object;
    const CUptiResult stopped = cuptiRangeProfilerStop(&stop);
    times->stop_ms += MsSince(t);
    RETURN_IF_ERROR(queued);
    if (err != cudaSuccess) return CudaRtStatus(err, "profiling the kernels");
    CUPTI_RETURN_IF_ERROR(stopped, "stopping the range profiler");
    all_submitted = stop.isAllPassSubmitted != 0;
    passes = pass + 1;
  }
  if (!all_submitted) {
    return absl::InternalError(
        absl::StrCat("the range profiler wanted more than ", max_iterations,
                     " passes for a config of ", config.passes));
  }
  out->passes += user ? passes : config.passes;
  return absl::OkStatus();
}

absl::Status CounterProfiler::ReadRanges(const Config& config,
                                         const std::vector<uint8_t>& data,
                                         size_t total, size_t skipped,
                                         Collection* out) {
  std::vector<const char*> names = CStrings(config.metrics);
  std::vector<double> values(names.size());
  for (size_t i = skipped; i < total; ++i) {
    CUpti_RangeProfiler_CounterData_GetRangeInfo_Params range = {
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE};
    range.pCounterDataImage = data.data();
    range.counterDataImageSize = data.size();
    range.rangeIndex = i;
    range.rangeDelimiter = "/";
    CUPTI_RETURN_IF_ERROR(cuptiRangeProfilerCounterDataGetRangeInfo(&range),
                          "reading a range name");
    CUpti_Profiler_Host_EvaluateToGpuValues_Params eval = {
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    eval.pHostObject = config.host;
    eval.pCounterDataImage = data.data();
    eval.counterDataImageSize = data.size();
    eval.rangeIndex = i;
    eval.ppMetricNames = names.data();
    eval.numMetrics = names.size();
    eval.pMetricValues = values.data();
    CUPTI_RETURN_IF_ERROR(cuptiProfilerHostEvaluateToGpuValues(&eval),
                          "evaluating the metrics");
    Range r;
    r.name = range.rangeName != nullptr ? range.rangeName : "";
    for (size_t m = 0; m < names.size(); ++m) {
      r.values[config.metrics[m]] = values[m];
    }
    out->ranges.push_back(std::move(r));
  }
  return absl::OkStatus();
}

}  // namespace kbench
