// Hangs on purpose. Must get verdict `timed_out` within its budget.
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  volatile int spin = 1;
  while (spin) {
  }
  out[0] = 0.f;
}
