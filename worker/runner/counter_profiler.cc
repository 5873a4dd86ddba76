#include "worker/runner/counter_profiler.h"

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
#include "common/status_macros.h"
#include "spdlog/spdlog.h"
#include "worker/runner/cuda_status.h"

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
    const std::function<absl::Status()>& enqueue) {
  const auto t0 = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(Config * config, ConfigFor(metrics));
  const bool user = options_.replay == Options::Replay::kUser;
  cudaStream_t stream = ctx_->stream();
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream), "before profiling");

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

  std::vector<const char*> names = CStrings(config->metrics);
  CUpti_RangeProfiler_GetCounterDataSize_Params size = {
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  size.pRangeProfilerObject = object;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = static_cast<size_t>(options_.max_ranges);
  size.maxNumRangeTreeNodes = static_cast<uint32_t>(options_.max_ranges);
  CUPTI_RETURN_IF_ERROR(cuptiRangeProfilerGetCounterDataSize(&size),
                        "sizing the counter data image");
  std::vector<uint8_t> data(size.counterDataSize, 0);
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params init = {
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  init.pRangeProfilerObject = object;
  init.counterDataSize = data.size();
  init.pCounterData = data.data();
  CUPTI_RETURN_IF_ERROR(cuptiRangeProfilerCounterDataImageInitialize(&init),
                        "initializing the counter data image");

  CUpti_RangeProfiler_SetConfig_Params set = {
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  set.pRangeProfilerObject = object;
  set.configSize = config->image.size();
  set.pConfig = config->image.data();
  set.counterDataImageSize = data.size();
  set.pCounterDataImage = data.data();
  set.range = CUPTI_AutoRange;
  set.replayMode = user ? CUPTI_UserReplay : CUPTI_KernelReplay;
  set.maxRangesPerPass = static_cast<size_t>(options_.max_ranges);
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  CUPTI_RETURN_IF_ERROR(cuptiRangeProfilerSetConfig(&set),
                        "configuring the range profiler");

  Collection out;
  out.dropped = config->dropped;
  const int max_iterations = config->passes + 2;
  bool all_submitted = false;
  for (int pass = 0; pass < max_iterations && !all_submitted; ++pass) {
    CUpti_RangeProfiler_Start_Params start = {
        CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    start.pRangeProfilerObject = object;
    CUPTI_RETURN_IF_ERROR(cuptiRangeProfilerStart(&start),
                          "starting the range profiler");
    absl::Status queued = absl::OkStatus();
    if (user && before_pass) queued = before_pass();
    if (queued.ok()) queued = enqueue();
    const cudaError_t err = cudaStreamSynchronize(stream);
    CUpti_RangeProfiler_Stop_Params stop = {
        CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    stop.pRangeProfilerObject = object;
    const CUptiResult stopped = cuptiRangeProfilerStop(&stop);
    RETURN_IF_ERROR(queued);
    if (err != cudaSuccess) return CudaRtStatus(err, "profiling the kernels");
    CUPTI_RETURN_IF_ERROR(stopped, "stopping the range profiler");
    all_submitted = stop.isAllPassSubmitted != 0;
    out.passes = pass + 1;
  }
  if (!all_submitted) {
    return absl::InternalError(
        absl::StrCat("the range profiler wanted more than ", max_iterations,
                     " passes for a config of ", config->passes));
  }
  CUpti_RangeProfiler_DecodeData_Params decode = {
      CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  decode.pRangeProfilerObject = object;
  CUPTI_RETURN_IF_ERROR(cuptiRangeProfilerDecodeData(&decode),
                        "decoding the counter data");
  if (decode.numOfRangeDropped > 0) {
    spdlog::warn("the range profiler dropped {} ranges (more than {} kernels)",
                 decode.numOfRangeDropped, options_.max_ranges);
  }
  if (!user) out.passes = config->passes;

  CUpti_RangeProfiler_GetCounterDataInfo_Params info = {
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = data.data();
  info.counterDataImageSize = data.size();
  CUPTI_RETURN_IF_ERROR(cuptiRangeProfilerGetCounterDataInfo(&info),
                        "reading the counter data");
  std::vector<double> values(names.size());
  const size_t skipped =
      user && before_pass ? static_cast<size_t>(before_pass_kernels) : 0;
  for (size_t i = skipped; i < info.numTotalRanges; ++i) {
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
    eval.pHostObject = config->host;
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
      r.values[config->metrics[m]] = values[m];
    }
    out.ranges.push_back(std::move(r));
  }
  out.wall_ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - t0)
                    .count();
  return out;
}

}  // namespace kbench
