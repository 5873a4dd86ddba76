// Cheat: writes into its input `x` (casting away const) after using it, as
// a kernel that reuses an input buffer for scratch would.
// To isolate the input checksum, the result stays correct whatever the
// order of runs: the write moves x[0] by one ulp towards zero
// (nextafterf), so any output computed from the old or the new value, by
// this run, a second run of the trial, or the reference run after it, is
// well inside the tolerance (atol 1e-3, rel-norm 1e-5). The value keeps
// moving on every run (never restored, unlike an XOR of the low bit), so
// only a bitwise checksum of the inputs after the run can catch it.
// Must get: rejected, "modified input".
//
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)

extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  const int b = blockIdx.x;
  const int k = blockIdx.y * blockDim.x + threadIdx.x;
  if (b >= B || k >= K) return;
  float acc = bias[k];
  for (int r = 0; r < R; ++r)
    for (int h = 0; h < H; ++h)
      acc += x[(r * B + b) * H + h] * w[k * (R * H) + r * H + h];
  out[b * K + k] = acc;
  if (b == 0 && k == 0) {
    float* scratch = const_cast<float*>(x);
    scratch[0] = nextafterf(scratch[0], 0.f);
  }
}
