// Cheat: caches its result across calls. The first call computes the
// answer and sets a device global; every later call sees the flag and
// returns at once, leaving whatever is in `out`. Device globals live as
// long as the loaded module, so this would look fast and right to a
// harness that reuses its output buffer.
// Must get: failed (each trial has fresh inputs and a NaN-poisoned output,
// so the second trial on one module load is NaN).
//
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)

__device__ int done = 0;

extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  if (*(volatile int*)&done) return;  // "Already computed."
  const int b = blockIdx.x;
  const int k = blockIdx.y * blockDim.x + threadIdx.x;
  if (b < B && k < K) {
    float acc = bias[k];
    for (int r = 0; r < R; ++r)
      for (int h = 0; h < H; ++h)
        acc += x[(r * B + b) * H + h] * w[k * (R * H) + r * H + h];
    out[b * K + k] = acc;
  }
  if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) done = 1;
}
