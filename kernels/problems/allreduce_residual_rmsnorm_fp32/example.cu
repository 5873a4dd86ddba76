// Simple fused all-reduce + residual add + RMSNorm (fp32): one block per
// row. Each thread sums the R ranks and the residual for its strided share
// of the row, writes residual_out and keeps its sum of squares; a tree in
// shared memory adds the shares; each thread then scales the values it
// wrote. Correct for every shape of the domain (64-bit indices, strided
// loops with bounds), not fast: a fast kernel vectorises the loads and
// sizes the block to H.
// y = sum_r x[r] + residual; out = y / sqrt(mean(y^2) + 1e-6) * gamma
//
// @kb problem allreduce_residual_rmsnorm_fp32
// @kb launch allreduce_residual_rmsnorm grid(B) block(256)

constexpr int kThreads = 256;  // The launch's block; a power of two.

extern "C" __global__ void allreduce_residual_rmsnorm(
    const float* x, const float* residual, const float* gamma,
    float* residual_out, float* out, int R, int B, int H) {
  __shared__ float share[kThreads];
  const int t = threadIdx.x;
  const long long row = static_cast<long long>(blockIdx.x) * H;
  const long long rank_stride = static_cast<long long>(B) * H;
  float sum_sq = 0.0f;
  for (int h = t; h < H; h += kThreads) {
    float y = 0.0f;
    for (int r = 0; r < R; ++r) y += x[r * rank_stride + row + h];
    y += residual[row + h];
    residual_out[row + h] = y;
    sum_sq += y * y;
  }
  share[t] = sum_sq;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (t < half) share[t] += share[t + half];
    __syncthreads();
  }
  const float inv_rms = rsqrtf(share[0] / H + 1e-6f);
  // The same thread wrote residual_out[row + h] above: no barrier needed.
  for (int h = t; h < H; h += kThreads) {
    out[row + h] = residual_out[row + h] * inv_rms * gamma[h];
  }
}
