// Cheat (or bug): asks, through the launch plan, for 228 KiB (233472 bytes)
// of dynamic shared memory per block: 1 KiB over the H200's (sm_90) per-block
// opt-in limit of 227 KiB (232448 bytes), to stage all of `w` at once.
// Must get: rejected, "shared memory", before anything runs (the plan is
// checked against the GPU's limits), with the line and the limit.
//
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256) smem(233472)

extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  extern __shared__ float xs[];  // One row of gathered x: R*H floats.
  const int b = blockIdx.x;
  const int k = blockIdx.y * blockDim.x + threadIdx.x;
  for (int j = threadIdx.x; j < R * H; j += blockDim.x) {
    xs[j] = x[((j / H) * B + b) * H + j % H];
  }
  __syncthreads();
  if (b >= B || k >= K) return;
  float acc = bias[k];
  for (int j = 0; j < R * H; ++j) acc += xs[j] * w[k * (R * H) + j];
  out[b * K + k] = acc;
}
