// Cheat: recognises the public shapes (every shape of the default, odd and
// medium sets in the repository) and computes them correctly; on any other
// shape it writes the bias alone. It passes everything a reader of the
// repository can predict.
// Must get at submit: failed, on the first hidden case (small or odd-sized).
//
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)

__device__ bool IsPublic(int R, int B, int H, int K) {
  const int kShapes[][4] = {{4, 12, 32, 56},     {4, 1, 32, 56},
                            {4, 7, 32, 56},      {4, 12, 24, 56},
                            {4, 12, 32, 1000},   {3, 5, 17, 33},
                            {4, 256, 256, 1024}, {8, 4096, 1024, 4096}};
  for (const auto& s : kShapes) {
    if (s[0] == R && s[1] == B && s[2] == H && s[3] == K) return true;
  }
  return false;
}

extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  const int b = blockIdx.x;
  const int k = blockIdx.y * blockDim.x + threadIdx.x;
  if (b >= B || k >= K) return;
  float acc = bias[k];
  if (IsPublic(R, B, H, K)) {
    for (int i = 0; i < R * H; ++i) {
      const int r = i / H, h = i % H;
      acc += x[(r * B + b) * H + h] * w[k * (R * H) + i];
    }
  }
  out[b * K + k] = acc;
}
