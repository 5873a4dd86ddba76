#include "runner/profile/sass_line_counters.h"

#include <cuda_runtime.h>
#include <cupti.h>
#include <cupti_profiler_target.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>

#include <array>
#include <cstdlib>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "runner/device/cuda_status.h"
#include "runner/profile/sass_source.h"
#include "spdlog/spdlog.h"

// CUPTI's parameter structs are set up as CUPTI's samples do: the size
// first, every other member zero, then the members that matter.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace kbench {
namespace {

// Warp-level global load instructions executed, and the sectors global
// memory instructions touched, per SASS instruction.
constexpr char kRequests[] = "smsp__sass_inst_executed_op_global_ld";
constexpr char kSectors[] = "smsp__sass_sectors_mem_global";

// The chip's SASS metric names that mention global memory, for an error
// message that says what there is instead.
std::string GlobalMetrics(const char* chip) {
  CUpti_SassMetrics_GetNumOfMetrics_Params num = {
      CUpti_SassMetrics_GetNumOfMetrics_Params_STRUCT_SIZE};
  num.pChipName = chip;
  if (cuptiSassMetricsGetNumOfMetrics(&num) != CUPTI_SUCCESS) return "?";
  std::vector<CUpti_SassMetrics_MetricDetails> list(num.numOfMetrics);
  CUpti_SassMetrics_GetMetrics_Params get = {
      CUpti_SassMetrics_GetMetrics_Params_STRUCT_SIZE};
  get.pChipName = chip;
  get.numOfMetrics = list.size();
  get.pMetricsList = list.data();
  if (cuptiSassMetricsGetMetrics(&get) != CUPTI_SUCCESS) return "?";
  std::vector<std::string> names;
  for (const CUpti_SassMetrics_MetricDetails& m : list) {
    if (m.pMetricName != nullptr &&
        absl::StrContains(m.pMetricName, "global")) {
      names.push_back(m.pMetricName);
    }
  }
  return absl::StrJoin(names, ", ");
}

}  // namespace

SassLineCounters::~SassLineCounters() {
  if (!configured_) return;
  CUpti_SassMetricsUnsetConfig_Params p = {
      CUpti_SassMetricsUnsetConfig_Params_STRUCT_SIZE};
  p.deviceIndex = device_;
  if (const CUptiResult r = cuptiSassMetricsUnsetConfig(&p);
      r != CUPTI_SUCCESS) {
    spdlog::warn("SASS metrics: unsetting the configuration: CUPTI error {}",
                 static_cast<int>(r));
  }
}

absl::Status SassLineCounters::Configure() {
  int device = 0;
  CUDA_RETURN_IF_ERROR(cudaGetDevice(&device), "reading the device");
  CUpti_Profiler_Initialize_Params init = {
      CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  CUPTI_RETURN_IF_ERROR(cuptiProfilerInitialize(&init),
                        "SASS metrics: initializing the profiler");
  CUpti_Device_GetChipName_Params chip = {
      CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  chip.deviceIndex = static_cast<size_t>(device);
  CUPTI_RETURN_IF_ERROR(cuptiDeviceGetChipName(&chip),
                        "SASS metrics: reading the chip name");

  const char* names[] = {kRequests, kSectors};
  std::vector<CUpti_SassMetrics_Config> configs;
  std::map<uint64_t, int> which;
  for (int i = 0; i < 2; ++i) {
    CUpti_SassMetrics_GetProperties_Params props = {
        CUpti_SassMetrics_GetProperties_Params_STRUCT_SIZE};
    props.pChipName = chip.pChipName;
    props.pMetricName = names[i];
    if (cuptiSassMetricsGetProperties(&props) != CUPTI_SUCCESS) {
      return absl::UnavailableError(absl::StrCat(
          "SASS metrics: ", chip.pChipName, " has no ", names[i],
          " (its global-memory SASS metrics: ", GlobalMetrics(chip.pChipName),
          ")"));
    }
    CUpti_SassMetrics_Config c = {};
    c.metricId = props.metric.metricId;
    c.outputGranularity = CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU;
    configs.push_back(c);
    which[c.metricId] = i;
  }
  CUpti_SassMetricsSetConfig_Params set = {
      CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE};
  set.pConfigs = configs.data();
  set.numOfMetricConfig = configs.size();
  set.deviceIndex = static_cast<uint32_t>(device);
  CUPTI_RETURN_IF_ERROR(cuptiSassMetricsSetConfig(&set),
                        "SASS metrics: configuring");
  configured_ = true;
  device_ = static_cast<uint32_t>(device);
  which_ = std::move(which);
  return absl::OkStatus();
}

absl::StatusOr<SassLineCounters::Result> SassLineCounters::Collect(
    const std::string& cubin, const PcSampler::Loader& load) {
  CUcontext cu = nullptr;
  ctx_->driver().CtxGetCurrent(&cu);
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(ctx_->stream()),
                       "before SASS metrics");
  if (collected_) {
    return absl::FailedPreconditionError(
        "SASS metrics: one collection per process (a second one patches "
        "nothing on this driver)");
  }
  collected_ = true;
  if (!configured_) RETURN_IF_ERROR(Configure());
  const std::map<uint64_t, int>& which = which_;

  // A fresh copy of the candidate's module, loaded right before the
  // enable: measured on the H200, a kernel is patched only when it is the
  // first launch since its module was loaded (after a memset, or after
  // another kernel of the module, nothing was), so a plan's earlier steps
  // run on another copy (line_loads.cc).
  ASSIGN_OR_RETURN(const std::function<absl::Status()> run, load());

  // Per instruction: (function, pc offset) -> {requests, sectors}. A
  // record holds one metric's values at one PC, or several; sum by id.
  std::map<std::pair<std::string, uint32_t>, std::array<int64_t, 2>> per_pc;
  size_t total_records = 0;
  // Reads the data of the enabled range.
  auto drain = [&]() -> absl::Status {
    CUpti_SassMetricsGetDataProperties_Params props = {
        CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE};
    props.ctx = cu;
    CUPTI_RETURN_IF_ERROR(cuptiSassMetricsGetDataProperties(&props),
                          "SASS metrics: sizing the data");
    if (props.numOfPatchedInstructionRecords == 0 ||
        props.numOfInstances == 0) {
      return absl::OkStatus();
    }
    std::vector<CUpti_SassMetrics_Data> records(
        props.numOfPatchedInstructionRecords);
    std::vector<std::vector<CUpti_SassMetrics_InstanceValue>> values(
        records.size());
    for (size_t i = 0; i < records.size(); ++i) {
      values[i].resize(props.numOfInstances);
      records[i] = {};
      records[i].structSize = sizeof(CUpti_SassMetrics_Data);
      records[i].pInstanceValues = values[i].data();
    }
    CUpti_SassMetricsFlushData_Params flush = {
        CUpti_SassMetricsFlushData_Params_STRUCT_SIZE};
    flush.ctx = cu;
    flush.numOfPatchedInstructionRecords = records.size();
    flush.numOfInstances = props.numOfInstances;
    flush.pMetricsData = records.data();
    CUPTI_RETURN_IF_ERROR(cuptiSassMetricsFlushData(&flush),
                          "SASS metrics: reading the data");
    for (const CUpti_SassMetrics_Data& r : records) {
      std::array<int64_t, 2>& v =
          per_pc[{r.functionName != nullptr ? r.functionName : "", r.pcOffset}];
      for (size_t k = 0; k < props.numOfInstances; ++k) {
        auto it = which.find(r.pInstanceValues[k].metricId);
        if (it != which.end()) v[it->second] += r.pInstanceValues[k].value;
      }
      std::free(const_cast<char*>(r.functionName));
    }
    total_records += records.size();
    return absl::OkStatus();
  };

  CUpti_SassMetricsEnable_Params enable = {
      CUpti_SassMetricsEnable_Params_STRUCT_SIZE};
  enable.ctx = cu;
  // Functions are patched at their first launch in the range.
  enable.enableLazyPatching = 1;
  CUPTI_RETURN_IF_ERROR(cuptiSassMetricsEnable(&enable),
                        "SASS metrics: enabling");
  absl::Status ran = run();
  if (ran.ok()) {
    if (const cudaError_t err = cudaStreamSynchronize(ctx_->stream());
        err != cudaSuccess) {
      ran = CudaRtStatus(err, "running the patched kernel");
    }
  }
  if (ran.ok()) ran = drain();
  CUpti_SassMetricsDisable_Params disable = {
      CUpti_SassMetricsDisable_Params_STRUCT_SIZE};
  disable.ctx = cu;
  if (const CUptiResult r = cuptiSassMetricsDisable(&disable);
      r != CUPTI_SUCCESS) {
    spdlog::warn("SASS metrics: disabling: CUPTI error {}",
                 static_cast<int>(r));
  }
  RETURN_IF_ERROR(ran);
  if (total_records == 0) {
    return absl::UnavailableError(
        "SASS metrics: no instruction of the candidate was patched");
  }
  Result out;
  SassSourceMap source_map(cubin);
  int64_t total_requests = 0;
  for (const auto& [pc, v] : per_pc) {
    // Sectors count for loads and stores alike; a load instruction is one
    // whose global-load count is not zero.
    if (v[0] == 0) continue;
    const std::pair<std::string, int>& where =
        source_map.Find(pc.first, pc.second);
    if (where.second <= 0) continue;
    LineLoads& l = out[where];
    l.requests += v[0];
    l.sectors += v[1];
    total_requests += v[0];
  }
  spdlog::info(
      "SASS metrics: {} records, {} global load requests over {} source "
      "lines",
      total_records, total_requests, out.size());
  return out;
}

}  // namespace kbench
