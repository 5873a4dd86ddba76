// Cheat: correct for B <= 100, and spins forever beyond (a bug that only
// large batches reach). Every public shape has B <= 12.
// Must get at submit: timed_out within the budget, on a hidden mid-size
// case (the last progress line names the class), and the worker serves the
// next job.
//
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)

__device__ volatile int kb_forever = 1;

extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  if (B > 100) {
    while (kb_forever) {
    }
  }
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
