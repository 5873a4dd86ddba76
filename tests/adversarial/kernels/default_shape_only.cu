// Cheat: specialised to the public default shape (R=4, B=12, H=32, K=56):
// the reduction bounds and every stride are baked in as constants and the
// int params R, B, H are ignored (a fully unrolled, fast loop). B and K are
// used only for the output guard, so the cheat never writes out of bounds
// and fails on its wrong answers alone. Correct on default/orig, b1 and
// k1000's first 56 columns; wrong on b7, h24, k1000 and r3b5h17k33.
// Must get: failed (the odd shape set catches it).
//
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)

extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  constexpr int kR = 4, kB = 12, kH = 32, kK = 56;
  const int b = blockIdx.x;
  const int k = blockIdx.y * blockDim.x + threadIdx.x;
  if (b >= B || k >= K || k >= kK) return;
  float acc = bias[k];
#pragma unroll
  for (int r = 0; r < kR; ++r) {
#pragma unroll
    for (int h = 0; h < kH; ++h) {
      acc += x[(r * kB + b) * kH + h] * w[k * (kR * kH) + r * kH + h];
    }
  }
  out[b * K + k] = acc;
}
