// Attack: a CCCL computed include through a user macro. thrust's
// <thrust/mr/memory_resource.h> does "#include THRUST_MR_STD_MR_HEADER" when
// the macro is defined, and only defines it itself when <memory_resource>
// exists (not under NVRTC): a user definition is used as the path.
// clang-format off
#define THRUST_MR_STD_MR_HEADER "@CANARY_FILE@"
#define THRUST_MR_STD_MR_NS std
#include <thrust/mr/memory_resource.h>
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = 1; }
