#include "worker/runner/pc_sampler.h"

#include <cuda_runtime.h>
#include <cupti.h>
#include <cupti_pcsampling.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/hot_lines.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"
#include "worker/runner/cuda_status.h"

// CUPTI's parameter structs are set up as CUPTI's samples do: the size
// first, every other member zero, then the members that matter.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace kbench {
namespace {

absl::Status PcStatus(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return absl::OkStatus();
  const char* text = nullptr;
  if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || text == nullptr) {
    text = "unknown CUPTI error";
  }
  return absl::UnavailableError(
      absl::StrCat("PC sampling: ", what, ": ", text));
}

#define PC_RETURN_IF_ERROR(expr, what) RETURN_IF_ERROR(PcStatus((expr), (what)))

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

absl::StatusOr<PcSampler::Result> PcSampler::Sample(
    const std::string& cubin, const std::string& source,
    const std::string& filename, int runs,
    const std::function<absl::Status()>& enqueue) {
  CUcontext cu = nullptr;
  ctx_->driver().CtxGetCurrent(&cu);
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(ctx_->stream()),
                       "before PC sampling");

  // Outlives the Disable guard below: CUPTI may write to it until then.
  std::unique_ptr<SampleBuffer> buffer;
  std::vector<uint32_t> indices;  // Stall reasons sampled (in the config).
  // Enabled first: the stall reason queries need PC sampling on.
  CUpti_PCSamplingEnableParams enable = {CUpti_PCSamplingEnableParamsSize};
  enable.ctx = cu;
  PC_RETURN_IF_ERROR(cuptiPCSamplingEnable(&enable), "enabling");
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
  PC_RETURN_IF_ERROR(cuptiPCSamplingGetNumStallReasons(&num),
                     "counting stall reasons");
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
  PC_RETURN_IF_ERROR(cuptiPCSamplingGetStallReasons(&reasons),
                     "reading stall reasons");
  std::map<uint32_t, std::string> reason_name;
  for (size_t i = 0; i < num_reasons; ++i) reason_name[indices[i]] = names[i];

  buffer = std::make_unique<SampleBuffer>(options_.buffer_pcs, num_reasons);
  std::vector<CUpti_PCSamplingConfigurationInfo> config(8);
  config[0].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
  config[0].attributeData.stallReasonData.stallReasonCount = num_reasons;
  config[0].attributeData.stallReasonData.pStallReasonIndex = indices.data();
  config[1].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
  config[1].attributeData.samplingPeriodData.samplingPeriod = options_.period;
  config[2].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
  config[2].attributeData.samplingDataBufferData.samplingDataBuffer =
      &buffer->data;
  config[3].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
  config[3].attributeData.enableStartStopControlData.enableStartStopControl = 1;
  config[4].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
  config[4].attributeData.collectionModeData.collectionMode =
      CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED;
  config[5].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
  config[5].attributeData.outputDataFormatData.outputDataFormat =
      CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
  config[6].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE;
  config[6].attributeData.hardwareBufferSizeData.hardwareBufferSize =
      options_.hardware_buffer_bytes;
  config[7].attributeType =
      CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
  config[7].attributeData.scratchBufferSizeData.scratchBufferSize =
      options_.scratch_buffer_bytes;
  CUpti_PCSamplingConfigurationInfoParams set = {
      CUpti_PCSamplingConfigurationInfoParamsSize};
  set.ctx = cu;
  set.numAttributes = config.size();
  set.pPCSamplingConfigurationInfo = config.data();
  PC_RETURN_IF_ERROR(cuptiPCSamplingSetConfigurationAttribute(&set),
                     "configuring");

  CUpti_PCSamplingStartParams start = {CUpti_PCSamplingStartParamsSize};
  start.ctx = cu;
  PC_RETURN_IF_ERROR(cuptiPCSamplingStart(&start), "starting");
  absl::Status queued = absl::OkStatus();
  for (int i = 0; i < runs && queued.ok(); ++i) queued = enqueue();
  const cudaError_t err = cudaStreamSynchronize(ctx_->stream());
  CUpti_PCSamplingStopParams stop = {CUpti_PCSamplingStopParamsSize};
  stop.ctx = cu;
  const CUptiResult stopped = cuptiPCSamplingStop(&stop);
  RETURN_IF_ERROR(queued);
  if (err != cudaSuccess) return CudaRtStatus(err, "PC sampling the kernels");
  PC_RETURN_IF_ERROR(stopped, "stopping");

  // Stop leaves the samples in the buffer; GetData fetches what remains.
  std::vector<PcSample> samples;
  std::map<std::pair<std::string, uint64_t>, std::pair<std::string, int>>
      lines;  // (function, pc offset) -> (file, line).
  for (int round = 0; round < 64; ++round) {
    for (size_t i = 0; i < buffer->data.totalNumPcs; ++i) {
      const CUpti_PCSamplingPCData& pc = buffer->data.pPcData[i];
      const std::string function =
          pc.functionName != nullptr ? pc.functionName : "";
      auto key = std::make_pair(function, pc.pcOffset);
      auto it = lines.find(key);
      if (it == lines.end()) {
        CUpti_GetSassToSourceCorrelationParams corr = {
            CUpti_GetSassToSourceCorrelationParamsSize};
        corr.cubin = cubin.data();
        corr.cubinSize = cubin.size();
        corr.functionName = function.c_str();
        corr.pcOffset = pc.pcOffset;
        std::pair<std::string, int> where = {"", 0};
        if (cuptiGetSassToSourceCorrelation(&corr) == CUPTI_SUCCESS) {
          where = {corr.fileName != nullptr ? corr.fileName : "",
                   static_cast<int>(corr.lineNumber)};
        }
        std::free(corr.fileName);
        std::free(corr.dirName);
        it = lines.emplace(key, where).first;
      }
      for (size_t r = 0; r < pc.stallReasonCount; ++r) {
        const CUpti_PCSamplingStallReason& s = pc.stallReason[r];
        if (s.samples == 0) continue;
        PcSample p;
        p.entry = function;
        p.file = it->second.first;
        p.line = it->second.second;
        p.state = reason_name[s.pcSamplingStallReasonIndex];
        p.samples = s.samples;
        samples.push_back(std::move(p));
      }
    }
    if (round > 0 && buffer->data.remainingNumPcs == 0) break;
    CUpti_PCSamplingGetDataParams get = {CUpti_PCSamplingGetDataParamsSize};
    get.ctx = cu;
    get.pcSamplingData = &buffer->data;
    PC_RETURN_IF_ERROR(cuptiPCSamplingGetData(&get), "reading the samples");
    if (buffer->data.totalNumPcs == 0 && buffer->data.remainingNumPcs == 0) {
      break;
    }
  }
  Result out;
  out.lines = RankSourceLines(samples, source, filename, options_.max_lines,
                              &out.samples);
  spdlog::debug("PC sampling: {} samples over {} PC/state records", out.samples,
                samples.size());
  return out;
}

}  // namespace kbench
