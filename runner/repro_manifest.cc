#include "runner/repro_manifest.h"

namespace kbench {

void FillManifestGpu(const v1::GpuSpec& spec, v1::ReproManifest* m) {
  m->set_gpu_name(spec.name());
  m->set_gpu_uuid(spec.uuid());
  m->set_driver_version(spec.driver_version());
  m->set_runtime_version(spec.runtime_version());
  m->set_nvrtc_version(spec.nvrtc_version());
  m->set_max_sm_clock_mhz(spec.sm_clock_mhz());
  m->set_max_memory_clock_mhz(spec.memory_clock_mhz());
  m->set_arch(spec.arch());
}

}  // namespace kbench
