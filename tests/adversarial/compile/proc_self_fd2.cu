// Attack: /proc/self/fd/2, the compiler's stderr: kbd's own log (a file when
// kbd runs under a service manager or this test). Reading it back leaks what
// kbd logged about other clients.
// clang-format off
__device__ int leak[] = {
%:include "/proc/self/fd/2"
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
