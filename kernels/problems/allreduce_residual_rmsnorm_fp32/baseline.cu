// The baseline's kernels for allreduce_residual_rmsnorm_fp32: PyTorch eager
// on one GPU, with RMSNorm as an unfused composite:
//   y = x.sum(0)                                     # sum_ranks
//   residual_out = y + residual                      # add_residual
//   ms = residual_out.pow(2).mean(-1, keepdim=True)  # row_mean_sq
//   out = residual_out * torch.rsqrt(ms + 1e-6) * gamma  # normalize
// (eager runs pow and mean, and add/rsqrt/mul/mul, as separate kernels;
// this baseline fuses each group into one, so it is no slower than eager).
// Workspaces are torch.empty: each is written before it is read.
// @kb workspace ysum bytes(B * H * 4)
// @kb workspace mean_sq bytes(B * 4)
// @kb launch sum_ranks grid(cdiv(B * H, 256)) block(256) args(x, ysum, R, B, H)
// @kb launch add_residual grid(cdiv(B * H, 256)) block(256) args(ysum, residual, residual_out, B, H)
// @kb launch row_mean_sq grid(B) block(256) args(residual_out, mean_sq, B, H)
// @kb launch normalize grid(cdiv(B * H, 256)) block(256) args(residual_out, mean_sq, gamma, out, B, H)

constexpr int kThreads = 256;  // row_mean_sq's block; a power of two.

__device__ long long ElementIndex() {
  return static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
}

extern "C" __global__ void sum_ranks(const float* x, float* ysum, int R, int B,
                                     int H) {
  const long long n = static_cast<long long>(B) * H;
  const long long i = ElementIndex();
  if (i >= n) return;
  float acc = 0.0f;
  for (int r = 0; r < R; ++r) acc += x[r * n + i];
  ysum[i] = acc;
}

extern "C" __global__ void add_residual(const float* ysum,
                                        const float* residual,
                                        float* residual_out, int B, int H) {
  const long long i = ElementIndex();
  if (i >= static_cast<long long>(B) * H) return;
  residual_out[i] = ysum[i] + residual[i];
}

// One block per row, as torch's row reduction: strided shares, then a tree.
extern "C" __global__ void row_mean_sq(const float* y, float* mean_sq, int B,
                                       int H) {
  __shared__ float share[kThreads];
  const int t = threadIdx.x;
  const long long row = static_cast<long long>(blockIdx.x) * H;
  float acc = 0.0f;
  for (int h = t; h < H; h += kThreads) acc += y[row + h] * y[row + h];
  share[t] = acc;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (t < half) share[t] += share[t + half];
    __syncthreads();
  }
  if (t == 0) mean_sq[blockIdx.x] = share[0] / H;
}

extern "C" __global__ void normalize(const float* y, const float* mean_sq,
                                     const float* gamma, float* out, int B,
                                     int H) {
  const long long i = ElementIndex();
  if (i >= static_cast<long long>(B) * H) return;
  const long long b = i / H;
  out[i] = y[i] * rsqrtf(mean_sq[b] + 1e-6f) * gamma[i - b * H];
}
