// Attack: line terminators a '\n'-based filter misses: a lone carriage
// return before the directive (the test's copy has "\r" where this file has
// "@CR@"), so a filter splitting lines on '\n' sees "int x;\r%:include...".
// clang-format off
__device__ int leak[] = {
0,@CR@%:include "@CANARY_FILE@"
@CR@#include "/etc/passwd"
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
