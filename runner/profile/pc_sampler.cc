#include "runner/profile/pc_sampler.h"

#include <cuda_runtime.h>
#include <cupti.h>
#include <cupti_pcsampling.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/hot_lines.h"
#include "base/status_macros.h"
#include "runner/device/cuda_status.h"
#include "runner/profile/sass_source.h"
#include "spdlog/spdlog.h"

// CUPTI's parameter structs are set up as CUPTI's samples do: the size
// first, every other member zero, then the members that matter.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace kbench {
namespace {

// The sample buffer CUPTI fills: `pcs` PC records, each with room for
// every stall reason. Freed by the destructor.
struct SampleBuffer {
  SampleBuffer(size_t pcs, size_t reasons) : records(pcs), stalls(pcs) {
    data.size = sizeof(CUpti_PCSamplingData);
    data.collectNumPcs = pcs;
    data.pPcData = records.data();
    for (size_t i = 0; i < pcs; ++i) {
      stalls[i].resize(reasons);
      records[i].size = sizeof(CUpti_PCSamplingPCData);
      records[i].stallReason = stalls[i].data();
    }
  }
  CUpti_PCSamplingData data = {};
  std::vector<CUpti_PCSamplingPCData> records;
  std::vector<std::vector<CUpti_PCSamplingStallReason>> stalls;
};

}  // namespace

absl::StatusOr<PcSampler::Result> PcSampler::Sample(const std::string& cubin,
                                                    const std::string& source,
                                                    const std::string& filename,
                                                    int runs, double run_us,
                                                    const Loader& load) {
  // A longer sampled window gets a longer period, so that the samples
  // stay near what options_.window_us gives at the base period.
  uint32_t period = options_.period;
  for (double window = runs * run_us; window > options_.window_us;
       window /= 2) {
    ++period;
  }
  absl::StatusOr<Result> r;
  for (int attempt = 0; attempt < 3; ++attempt) {
    r = SampleAt(std::min<uint32_t>(period, 31), cubin, source, filename, runs,
                 load);
    if (!absl::IsResourceExhausted(r.status())) break;
    spdlog::info("PC sampling: hardware buffer full at period {}; retrying",
                 period);
    period += 3;  // 8x fewer samples.
  }
  return r;
}

absl::StatusOr<PcSampler::Result> PcSampler::SampleAt(
    uint32_t period, const std::string& cubin, const std::string& source,
    const std::string& filename, int runs, const Loader& load) {
  CUcontext cu = nullptr;
  ctx_->driver().CtxGetCurrent(&cu);
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(ctx_->stream()),
                       "before PC sampling");

  // Both outlive the Disable guard below: CUPTI may write to them until
  // then. `config_buffer` is the buffer the configuration names;
  // `fetched` receives the samples from GetData.
  std::unique_ptr<SampleBuffer> config_buffer, fetched;
  std::vector<uint32_t> indices;  // Stall reasons sampled (in the config).
  // Enabled first: the stall reason queries need PC sampling on, and only
  // modules loaded from now on count as user code.
  CUpti_PCSamplingEnableParams enable = {CUpti_PCSamplingEnableParamsSize};
  enable.ctx = cu;
  CUPTI_RETURN_IF_ERROR(cuptiPCSamplingEnable(&enable),
                        "PC sampling: enabling");
  struct Disable {
    CUcontext cu;
    ~Disable() {
      CUpti_PCSamplingDisableParams p = {CUpti_PCSamplingDisableParamsSize};
      p.ctx = cu;
      cuptiPCSamplingDisable(&p);
    }
  } disable{cu};

  // Stall reason names and indices.
  size_t num_reasons = 0;
  CUpti_PCSamplingGetNumStallReasonsParams num = {
      CUpti_PCSamplingGetNumStallReasonsParamsSize};
  num.ctx = cu;
  num.numStallReasons = &num_reasons;
  CUPTI_RETURN_IF_ERROR(cuptiPCSamplingGetNumStallReasons(&num),
                        "PC sampling: counting stall reasons");
  std::vector<std::vector<char>> name_storage(
      num_reasons, std::vector<char>(CUPTI_STALL_REASON_STRING_SIZE, 0));
  std::vector<char*> names(num_reasons);
  for (size_t i = 0; i < num_reasons; ++i) names[i] = name_storage[i].data();
  indices.assign(num_reasons, 0);
  CUpti_PCSamplingGetStallReasonsParams reasons = {
      CUpti_PCSamplingGetStallReasonsParamsSize};
  reasons.ctx = cu;
  reasons.numStallReasons = num_reasons;
  reasons.stallReasonIndex = indices.data();
  reasons.stallReasons = names.data();
  CUPTI_RETURN_IF_ERROR(cuptiPCSamplingGetStallReasons(&reasons),
                        "PC sampling: reading stall reasons");
  std::map<uint32_t, std::string> reason_name;
  for (size_t i = 0; i < num_reasons; ++i) reason_name[indices[i]] = names[i];

  config_buffer =
      std::make_unique<SampleBuffer>(options_.buffer_pcs, num_reasons);
  fetched = std::make_unique<SampleBuffer>(options_.buffer_pcs, num_reasons);
  std::vector<CUpti_PCSamplingConfigurationInfo> config(7);
  config[0].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
  config[0].attributeData.stallReasonData.stallReasonCount = num_reasons;
  config[0].attributeData.stallReasonData.pStallReasonIndex = indices.data();
  config[1].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
  config[1].attributeData.samplingPeriodData.samplingPeriod = period;
  config[2].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
  config[2].attributeData.samplingDataBufferData.samplingDataBuffer =
      &config_buffer->data;
  config[3].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
  config[3].attributeData.enableStartStopControlData.enableStartStopControl = 1;
  config[4].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
  config[4].attributeData.outputDataFormatData.outputDataFormat =
      CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
  config[5].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE;
  config[5].attributeData.hardwareBufferSizeData.hardwareBufferSize =
      options_.hardware_buffer_bytes;
  config[6].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
  config[6].attributeData.scratchBufferSizeData.scratchBufferSize =
      options_.scratch_buffer_bytes;
  CUpti_PCSamplingConfigurationInfoParams set = {
      CUpti_PCSamplingConfigurationInfoParamsSize};
  set.ctx = cu;
  set.numAttributes = config.size();
  set.pPCSamplingConfigurationInfo = config.data();
  CUPTI_RETURN_IF_ERROR(cuptiPCSamplingSetConfigurationAttribute(&set),
                        "PC sampling: configuring");

  // A fresh copy of the candidate, loaded while PC sampling is enabled.
  ASSIGN_OR_RETURN(std::function<absl::Status()> enqueue, load());
  CUpti_PCSamplingStartParams start = {CUpti_PCSamplingStartParamsSize};
  start.ctx = cu;
  CUPTI_RETURN_IF_ERROR(cuptiPCSamplingStart(&start), "PC sampling: starting");
  absl::Status queued = absl::OkStatus();
  for (int i = 0; i < runs && queued.ok(); ++i) queued = enqueue();
  const cudaError_t err = cudaStreamSynchronize(ctx_->stream());
  CUpti_PCSamplingStopParams stop = {CUpti_PCSamplingStopParamsSize};
  stop.ctx = cu;
  const CUptiResult stopped = cuptiPCSamplingStop(&stop);
  RETURN_IF_ERROR(queued);
  if (err != cudaSuccess) return CudaRtStatus(err, "PC sampling the kernels");
  CUPTI_RETURN_IF_ERROR(stopped, "PC sampling: stopping");

  // After Stop, GetData hands over the range's records, a buffer at a time.
  std::vector<PcSample> samples;
  SassSourceMap source_map(cubin);
  uint64_t total = 0, dropped = 0, non_user = 0;
  bool hardware_full = false;
  for (int round = 0; round < 256; ++round) {
    CUpti_PCSamplingGetDataParams get = {CUpti_PCSamplingGetDataParamsSize};
    get.ctx = cu;
    get.pcSamplingData = &fetched->data;
    const CUptiResult got = cuptiPCSamplingGetData(&get);
    if (got == CUPTI_ERROR_OUT_OF_MEMORY) {
      return absl::ResourceExhaustedError(
          "PC sampling: the hardware sample buffer filled up");
    }
    CUPTI_RETURN_IF_ERROR(got, "PC sampling: reading the samples");
    const CUpti_PCSamplingData& data = fetched->data;
    total += data.totalSamples;
    dropped += data.droppedSamples;
    non_user += data.nonUsrKernelsTotalSamples;
    hardware_full = hardware_full || data.hardwareBufferFull != 0;
    for (size_t i = 0; i < data.totalNumPcs; ++i) {
      const CUpti_PCSamplingPCData& pc = data.pPcData[i];
      const std::string function =
          pc.functionName != nullptr ? pc.functionName : "";
      const std::pair<std::string, int>& where =
          source_map.Find(function, pc.pcOffset);
      for (size_t r = 0; r < pc.stallReasonCount; ++r) {
        const CUpti_PCSamplingStallReason& s = pc.stallReason[r];
        if (s.samples == 0) continue;
        PcSample p;
        p.entry = function;
        p.file = where.first;
        p.line = where.second;
        p.state = reason_name[s.pcSamplingStallReasonIndex];
        p.samples = s.samples;
        samples.push_back(std::move(p));
      }
    }
    if (data.remainingNumPcs == 0) break;
  }
  Result out;
  out.lines = RankSourceLines(samples, source, filename, options_.max_lines,
                              &out.samples);
  if (hardware_full) {
    return absl::ResourceExhaustedError(
        "PC sampling: the hardware sample buffer filled up");
  }
  spdlog::info(
      "PC sampling: period {}, {} runs, {} samples ({} dropped, {} in non-user "
      "kernels), {} in {} PC/state records of the candidate",
      period, runs, total, dropped, non_user, out.samples, samples.size());
  if (out.samples == 0) {
    return absl::UnavailableError(absl::StrCat(
        "PC sampling found no samples in the candidate's code (", total,
        " samples in all, ", dropped, " dropped by the hardware, ", non_user,
        " in non-user kernels)"));
  }
  return out;
}

}  // namespace kbench
