// Naive "virtual all-gather then linear" (fp32): one thread per output.
// out[b][k] = bias[k] + sum_{r,h} x[r][b][h] * w[k][r*H + h]
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
  // One loop over the gathered row (R*H): element i is x[r][b][h] with
  // r = i / H, h = i % H.
  for (int i = 0; i < R * H; ++i) {
    const int r = i / H, h = i % H;
    acc += x[(r * B + b) * H + h] * w[k * (R * H) + i];
  }
  out[b * K + k] = acc;
}
