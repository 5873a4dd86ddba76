// A two-launch fp32 plan that shows workspaces and per-launch args:
// launch 1 materialises the gather into a workspace (as torch.cat would),
// launch 2 computes each output as a warp-wide dot product over it.
//
// @kb problem gather_linear_fp32
// @kb workspace gathered bytes(B * R * H * 4)
// @kb launch gather_rows grid(B, R) block(min(H, 256)) args(x, gathered, R, B, H)
// @kb launch linear_rows grid(B, cdiv(K, 8)) block(256) args(gathered, w, bias, out, R, B, H, K)

extern "C" __global__ void gather_rows(const float* x, float* gathered, int R,
                                       int B, int H) {
  const int b = blockIdx.x, r = blockIdx.y;
  for (int h = threadIdx.x; h < H; h += blockDim.x) {
    gathered[(size_t)b * R * H + r * H + h] = x[((size_t)r * B + b) * H + h];
  }
}

// 8 warps per block; warp i computes out[b][blockIdx.y * 8 + i].
extern "C" __global__ void linear_rows(const float* gathered, const float* w,
                                       const float* bias, float* out, int R,
                                       int B, int H, int K) {
  const int b = blockIdx.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int k = blockIdx.y * 8 + warp;
  if (k >= K) return;
  const int n = R * H;
  const float* g = gathered + (size_t)b * n;
  const float* wk = w + (size_t)k * n;
  float acc = 0.f;
  for (int j = lane; j < n; j += 32) acc += g[j] * wk[j];
  for (int off = 16; off > 0; off /= 2)
    acc += __shfl_down_sync(0xffffffffu, acc, off);
  if (lane == 0) out[(size_t)b * K + k] = acc + bias[k];
}
