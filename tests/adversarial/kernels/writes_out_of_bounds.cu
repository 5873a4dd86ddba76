// Cheat: computes the right answer, and also writes 4 floats past the end
// of `out` (a "harmless" scratch area: cudaMalloc rounds allocations up, so
// nothing faults and the checked outputs are all right).
// Must get: rejected, "out of bounds" (guard regions around every buffer
// are checked after every run).
//
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)

extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  const int b = blockIdx.x;
  const int k = blockIdx.y * blockDim.x + threadIdx.x;
  if (b >= B || k >= K) return;
  float acc = bias[k];
  for (int r = 0; r < R; ++r)
    for (int h = 0; h < H; ++h)
      acc += x[(r * B + b) * H + h] * w[k * (R * H) + r * H + h];
  out[b * K + k] = acc;
  if (b == 0 && k < 4) out[B * K + k] = acc;  // 4 floats past the end.
}
