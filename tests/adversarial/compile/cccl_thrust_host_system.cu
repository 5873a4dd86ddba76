// Attack: thrust's "#include __THRUST_HOST_SYSTEM_GATHER_HEADER", which is
// <__THRUST_HOST_SYSTEM_ROOT/detail/gather.h> with ROOT built from
// __THRUST_HOST_SYSTEM_NAMESPACE. An unknown THRUST_HOST_SYSTEM leaves the
// namespace macro to the user, who points it through thrust/system/cpp/
// with '..' and ends the header name early with '>'.
// clang-format off
#define THRUST_HOST_SYSTEM 99
#define __THRUST_HOST_SYSTEM_NAMESPACE cpp/../../../../../../../../../../..@CANARY_FILE@>
#include <thrust/system/detail/adl/gather.h>
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = 1; }
