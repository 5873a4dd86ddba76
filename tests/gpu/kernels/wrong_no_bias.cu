// Wrong on purpose: forgets the bias. Must get verdict `failed` with
// error figures.
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  const int b = blockIdx.x;
  const int k = blockIdx.y * blockDim.x + threadIdx.x;
  if (k >= K) return;
  float acc = 0.f;
  for (int r = 0; r < R; ++r)
    for (int h = 0; h < H; ++h)
      acc += x[(r * B + b) * H + h] * w[k * (R * H) + r * H + h];
  out[b * K + k] = acc;
}
