#include "runner/profile/sass_source.h"

#include <cupti.h>
#include <cupti_pcsampling.h>

#include <cstdlib>

// CUPTI's parameter structs are set up as CUPTI's samples do: the size
// first, every other member zero, then the members that matter.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace kbench {

const std::pair<std::string, int>& SassSourceMap::Find(
    const std::string& function, uint64_t pc_offset) {
  auto key = std::make_pair(function, pc_offset);
  auto it = lines_.find(key);
  if (it != lines_.end()) return it->second;
  CUpti_GetSassToSourceCorrelationParams corr = {
      CUpti_GetSassToSourceCorrelationParamsSize};
  corr.cubin = cubin_.data();
  corr.cubinSize = cubin_.size();
  corr.functionName = function.c_str();
  corr.pcOffset = pc_offset;
  std::pair<std::string, int> where = {"", 0};
  if (cuptiGetSassToSourceCorrelation(&corr) == CUPTI_SUCCESS) {
    where = {corr.fileName != nullptr ? corr.fileName : "",
             static_cast<int>(corr.lineNumber)};
  }
  std::free(corr.fileName);
  std::free(corr.dirName);
  return lines_.emplace(key, std::move(where)).first->second;
}

}  // namespace kbench
