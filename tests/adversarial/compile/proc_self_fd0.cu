// Attack: /proc/self/fd/0, the compiler child's stdin: the request pipe from
// kbd. Opening it gives a second reader of that pipe (other clients'
// requests, or a hang until the wall-clock limit); the compile must end
// bounded, and kbd keep serving.
// clang-format off
__device__ int leak[] = {
%:include "/proc/self/fd/0"
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
