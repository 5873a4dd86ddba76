// Attack: #pragma and _Pragma. include_alias maps an allowed name to a host
// file (MSVC-style; EDG may honour it); push_macro/pop_macro bring back a
// macro the source #undef'd (so a filter that tracks #define/#undef is
// fooled); _Pragma built by a macro tries to emit a directive.
// clang-format off
#pragma include_alias(<mma.h>, "@CANARY_FILE@")
#pragma include_alias("cuda_bf16.h", "/etc/passwd")
#define P "@CANARY_FILE@"
#pragma push_macro("P")
#undef P
#pragma pop_macro("P")
#define DO(x) _Pragma(#x)
DO(include P)
_Pragma("push_macro(\"P\")")
__device__ int leak[] = {
%:include P
};
#include <mma.h>

#include "cuda_bf16.h"
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
