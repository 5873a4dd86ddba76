// Attack: '..' traversal from a real toolkit subdirectory (crt/, cuda/,
// cooperative_groups/), so a check that the first component exists passes:
// <crt/../../../../../proc/self/environ>, and a digraph variant to the canary.
// clang-format off
__device__ int leak[] = {
#include <crt/../../../../../../../../../../proc/self/environ>
%:include <cooperative_groups/../../../../../../../../../..@CANARY_FILE@>
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
