// Naive "virtual all-gather then linear" (bf16 in and out, fp32 accumulate):
// one thread per output.
//
// @kb problem gather_linear_bf16
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)
#include <cuda_bf16.h>

extern "C" __global__ void gather_linear(const __nv_bfloat16* x,
                                         const __nv_bfloat16* w,
                                         const __nv_bfloat16* bias,
                                         __nv_bfloat16* out, int R, int B,
                                         int H, int K) {
  const int b = blockIdx.x;
  const int k = blockIdx.y * blockDim.x + threadIdx.x;
  if (b >= B || k >= K) return;
  float acc = __bfloat162float(bias[k]);
  for (int r = 0; r < R; ++r) {
    for (int h = 0; h < H; ++h) {
      acc += __bfloat162float(x[(r * B + b) * H + h]) *
             __bfloat162float(w[k * (R * H) + r * H + h]);
    }
  }
  out[b * K + k] = __float2bfloat16(acc);
}
