// Cheat: quietly drops precision. Converts the fp32 inputs to __half and
// multiplies and accumulates in __half (twice the throughput, half the
// bytes), then widens the result back to fp32.
// Must get: failed, "outside tolerance" (fp16's 11-bit mantissa over a
// 128-term dot product is ~1e-3 relative, far above the fp32 problem's
// max_rel_norm of 1e-5). Assumes inputs stay small enough (|v| << 256) that
// fp16 does not overflow; if it did, the message would say NaN/Inf instead.
//
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)

#include <cuda_fp16.h>

extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  const int b = blockIdx.x;
  const int k = blockIdx.y * blockDim.x + threadIdx.x;
  if (b >= B || k >= K) return;
  __half acc = __float2half(bias[k]);
  for (int r = 0; r < R; ++r)
    for (int h = 0; h < H; ++h)
      acc = __hfma(__float2half(x[(r * B + b) * H + h]),
                   __float2half(w[k * (R * H) + r * H + h]), acc);
  out[b * K + k] = __half2float(acc);
}
