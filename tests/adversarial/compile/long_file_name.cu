// Attack: a 64 KiB file name. The test sends this file with the request's
// filename set to 64 KiB of 'a' (gRPC and the sandbox; HTTP always names it
// kernel.cu) and the include operand below is 64 KiB too. It must be
// refused with a clear message, not crash the compiler or be reported as a
// resource limit.
// clang-format off
__device__ int leak[] = {
%:include "@LONG_NAME@"
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
