// Attack: line splices. "#\" then a newline then "include", and a splice
// inside the directive name ("#inc\" newline "lude"): phase 2 joins them
// before the preprocessor looks, a line-based filter does not.
// clang-format off
__device__ int leak[] = {
#\
include "@CANARY_FILE@"
#inc\
lude "/etc/passwd"
%:\
include "/etc/passwd"
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
