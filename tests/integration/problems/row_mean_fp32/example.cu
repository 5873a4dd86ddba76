// One thread per row: correct for every shape of the domain, not fast.
// @kb problem row_mean_fp32
// @kb launch row_mean_naive grid(cdiv(R, 128)) block(128)
extern "C" __global__ void row_mean_naive(const float* x, float* out, int R,
                                          int C) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= R) return;
  float acc = 0.0f;
  for (int c = 0; c < C; ++c) acc += x[static_cast<long long>(r) * C + c];
  out[r] = acc / C;
}
