// GELU, tanh form, fp32: one thread per element, fp32 math with tanhf.
// Memory-bound; a faster kernel handles several elements per thread with
// 16-byte loads. Correct on every size: the index is guarded.
// @kb problem gelu_tanh_fp32
// @kb launch gelu_tanh grid(cdiv(N, 256)) block(256)
extern "C" __global__ void gelu_tanh(const float* x, float* y, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;  // N < 2^31.
  if (i >= N) return;
  const float kSqrt2OverPi = 0.7978845608f;
  const float v = x[i];
  y[i] = 0.5f * v * (1.0f + tanhf(kSqrt2OverPi * (v + 0.044715f * v * v * v)));
}
