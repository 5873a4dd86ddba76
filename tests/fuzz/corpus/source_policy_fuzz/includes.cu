#include <cuda_fp16.h>

#include "cuda_bf16.h"
% : include<mma.h>
#include <cuda/std/cstdint>
#if __has_include(<cuda_fp8.h>)
#endif
        __global__ void
        k() {
}
