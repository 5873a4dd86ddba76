// Hangs on purpose. Must get verdict `timed_out` within its budget. The
// loop reads an input through a volatile pointer (inputs are in [-1, 1)),
// so the compiler can neither prove it finite nor drop it.
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  const volatile float* p = x;
  while (p[0] < 2.0f) {
  }
  out[0] = 0.f;
}
