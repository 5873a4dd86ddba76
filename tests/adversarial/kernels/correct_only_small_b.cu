// Cheat: correct for B <= 128 and silent beyond: rows b >= 128 are never
// written, as if the kernel had been tested only on small batches. Every
// public shape has B <= 12, so run_correctness on the public sets passes.
// Must get at submit: failed, on a hidden mid-size case (B in 257..4096).
//
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(min(B, 128), cdiv(K, 256)) block(256)

extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  const int b = blockIdx.x;
  const int k = blockIdx.y * blockDim.x + threadIdx.x;
  if (b >= B || k >= K) return;
  float acc = bias[k];
  for (int i = 0; i < R * H; ++i) {
    const int r = i / H, h = i % H;
    acc += x[(r * B + b) * H + h] * w[k * (R * H) + i];
  }
  out[b * K + k] = acc;
}
