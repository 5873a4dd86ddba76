// Cheat: the gathered row x[:, b, :] (R*H values) is staged in a fixed
// shared tile of 128 floats, and the reduction runs over the tile only: right
// while R*H <= 128 (every public shape: R*H is 128, 96 or 51), wrong beyond,
// without writing out of bounds.
// Must get at submit: failed, on a hidden case with R*H > 128 (the mid-size
// and large classes always have one).
//
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 128)) block(128)

extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  constexpr int kTile = 128;
  __shared__ float row[kTile];
  const int b = blockIdx.x;
  const int k = blockIdx.y * blockDim.x + threadIdx.x;
  const int n = min(R * H, kTile);
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const int r = i / H, h = i % H;
    row[i] = x[(r * B + b) * H + h];
  }
  __syncthreads();
  if (k >= K) return;
  float acc = bias[k];
  for (int i = 0; i < n; ++i) acc += row[i] * w[k * (R * H) + i];
  out[b * K + k] = acc;
}
