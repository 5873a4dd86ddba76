// Counts NVIDIA GPUs without linking the driver: loads libcuda.so.1
// dynamically and asks it. Creates no CUDA context. Used by kbd
// (--local-worker=auto) and by the tests labelled gpu to skip cleanly.
// Thread safety: safe to call concurrently.
#ifndef KBENCH_BASE_GPU_PROBE_H_
#define KBENCH_BASE_GPU_PROBE_H_

namespace kbench {

// GPUs the CUDA driver reports (honouring CUDA_VISIBLE_DEVICES); 0 when
// there is no driver or it fails to initialise.
int CountCudaGpus();

}  // namespace kbench

#endif  // KBENCH_BASE_GPU_PROBE_H_
