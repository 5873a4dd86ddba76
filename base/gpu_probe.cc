#include "base/gpu_probe.h"

#include <dlfcn.h>

namespace kbench {

int CountCudaGpus() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return 0;
  using InitFn = int (*)(unsigned int);
  using CountFn = int (*)(int*);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(lib, "cuDeviceGetCount"));
  int n = 0;
  if (init == nullptr || count == nullptr || init(0) != 0 || count(&n) != 0) {
    n = 0;
  }
  // libcuda stays loaded: unloading the driver library is not worth it.
  return n;
}

}  // namespace kbench
