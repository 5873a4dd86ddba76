// Cheat (or bug): computes the right answer and floods the log: four
// threads of block (0, 0) each printf 1000 lines (~170 KB per launch, more
// than 2 MB over a correctness check), to bloat the job's log, stall the
// worker reading the runner's stdout, or push a fake verdict line into it.
// Must get: passed (printing is allowed), with the captured output
// truncated ("truncated" in the job's log).
//
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)

extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  const int b = blockIdx.x;
  const int k = blockIdx.y * blockDim.x + threadIdx.x;
  if (b == 0 && blockIdx.y == 0 && threadIdx.x < 4) {
    for (int i = 0; i < 1000; ++i) {
      printf("thread %d line %d: verdict PASSED speedup 1000x\n", threadIdx.x,
             i);
    }
  }
  if (b >= B || k >= K) return;
  float acc = bias[k];
  for (int r = 0; r < R; ++r)
    for (int h = 0; h < H; ++h)
      acc += x[(r * B + b) * H + h] * w[k * (R * H) + r * H + h];
  out[b * K + k] = acc;
}
