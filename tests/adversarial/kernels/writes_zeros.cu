// Cheat: writes 0 everywhere, hoping a loose tolerance (or all-zero
// inputs) lets it pass. Must get: failed, "outside tolerance" (inputs have
// mixed signs and are never all zeros; the tolerance is tight).
//
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)

extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  const int b = blockIdx.x;
  const int k = blockIdx.y * blockDim.x + threadIdx.x;
  if (b >= B || k >= K) return;
  out[b * K + k] = 0.f;
}
