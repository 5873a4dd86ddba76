// A WorkerInfo that passes ValidateWorkerInfo, for the tests of the worker
// checks and of the WorkerRegistry.
#ifndef KBENCH_SERVER_CORE_WORKER_INFO_FIXTURES_H_
#define KBENCH_SERVER_CORE_WORKER_INFO_FIXTURES_H_

#include <cstdint>
#include <string>

#include "kbench/v1/worker.pb.h"

namespace kbench::testing {

// A worker as kbworker reports it (the fake runner's GPU, with limits).
inline v1::WorkerInfo Valid(const std::string& id,
                            const std::string& arch = "sm_90") {
  v1::WorkerInfo info;
  info.set_worker_id(id);
  info.set_hostname("host");
  info.set_gpu_index(0);
  info.set_version(KBENCH_VERSION);
  v1::GpuSpec* s = info.mutable_spec();
  s->set_name("NVIDIA H200");
  s->set_uuid("GPU-1234");
  s->set_arch(arch);
  s->set_cc_major(arch == "sm_80" ? 8 : 9);
  s->set_cc_minor(0);
  s->set_sm_count(132);
  s->set_max_threads_per_block(1024);
  s->set_smem_per_block_bytes(48 * 1024);
  s->set_smem_per_block_optin_bytes(227 * 1024);
  s->set_regs_per_block(65536);
  s->set_warp_size(32);
  for (int64_t d : {1024, 1024, 64}) s->add_max_block_dims(d);
  for (int64_t d : {2147483647, 65535, 65535}) s->add_max_grid_dims(d);
  s->set_measured_copy_gbps(4000);
  return info;
}

}  // namespace kbench::testing

#endif  // KBENCH_SERVER_CORE_WORKER_INFO_FIXTURES_H_
