// Attack: #import and %:import (Objective-C / GNU "include once"), which EDG
// may accept as an include.
// clang-format off
__device__ int leak[] = {
%:import "@CANARY_FILE@"
#import "/etc/passwd"
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
