// Cheat (or bug): aborts the kernel with __trap(), leaving the context in a
// sticky error state.
// Must get: crashed, and the worker must go on serving (a fresh runner).
//
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)

extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  if (threadIdx.x == 0) __trap();
  out[blockIdx.x * K + threadIdx.x % K] = 0.f;
}
