// The golden of allreduce_residual_rmsnorm_fp32: every output in fp64, from
// fp64 copies of the inputs. An output element needs its whole row's sum of
// squares, so one block per row, not one thread per element: each thread
// sums the squares of its strided share of the row, a fixed-order tree in
// shared memory adds the 256 shares (deterministic), then each thread
// writes its share of both outputs. O(R*B*H) work in all.
// @kb launch golden grid(B) block(256)

constexpr int kThreads = 256;  // The launch's block; a power of two.

extern "C" __global__ void golden(const double* x, const double* residual,
                                  const double* gamma, double* residual_out,
                                  double* out, int R, int B, int H) {
  __shared__ double share[kThreads];
  const int t = threadIdx.x;
  const long long row = static_cast<long long>(blockIdx.x) * H;
  const long long rank_stride = static_cast<long long>(B) * H;
  double sum_sq = 0.0;
  for (int h = t; h < H; h += kThreads) {
    double y = residual[row + h];
    for (int r = 0; r < R; ++r) y += x[r * rank_stride + row + h];
    residual_out[row + h] = y;
    sum_sq += y * y;
  }
  share[t] = sum_sq;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (t < half) share[t] += share[t + half];
    __syncthreads();
  }
  const double inv_rms = 1.0 / sqrt(share[0] / H + 1e-6);
  // Each thread reads back only the elements it wrote itself.
  for (int h = t; h < H; h += kThreads) {
    out[row + h] = residual_out[row + h] * inv_rms * gamma[h];
  }
}
