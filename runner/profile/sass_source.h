// SassSourceMap: the CUDA source line of each SASS instruction of one
// cubin built with -lineinfo (cuptiGetSassToSourceCorrelation), looked up
// once per (function, pc offset). Used by PcSampler and SassLineCounters.
//
// Ownership: borrows the cubin, which must outlive the map. Thread safety:
// none.
#ifndef KBENCH_RUNNER_PROFILE_SASS_SOURCE_H_
#define KBENCH_RUNNER_PROFILE_SASS_SOURCE_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace kbench {

class SassSourceMap {
 public:
  explicit SassSourceMap(const std::string& cubin) : cubin_(cubin) {}

  // (file, line) of `pc_offset` in `function`; ("", 0) when the PC has no
  // line information.
  const std::pair<std::string, int>& Find(const std::string& function,
                                          uint64_t pc_offset);

 private:
  const std::string& cubin_;
  std::map<std::pair<std::string, uint64_t>, std::pair<std::string, int>>
      lines_;
};

}  // namespace kbench

#endif  // KBENCH_RUNNER_PROFILE_SASS_SOURCE_H_
