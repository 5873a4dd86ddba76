// Naive row-parallel linear then virtual reduce-scatter (fp32): one thread
// per output, summing over every rank's slice of the features. Correct for
// every shape of the domain (64-bit indices, every index guarded), not fast:
// a fast kernel tiles the (R*H)-long reduction and reads w coalesced.
// out[r][s][k] = sum_{q,h} x[q][r*S + s][h] * w[q][k][h]
//
// @kb problem linear_reduce_scatter_fp32
// @kb launch linear_reduce_scatter grid(cdiv(K, 256), S, R) block(256)

extern "C" __global__ void linear_reduce_scatter(const float* x, const float* w,
                                                 float* out, int R, int S,
                                                 int H, int K) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  const int s = blockIdx.y;
  const int r = blockIdx.z;
  if (k >= K) return;
  // Rank r keeps rows [r*S, (r+1)*S) of the full batch of B = R*S rows.
  const long long rows = static_cast<long long>(R) * S;
  const long long row = static_cast<long long>(r) * S + s;
  float acc = 0.0f;
  for (int q = 0; q < R; ++q) {
    const float* xq = x + (q * rows + row) * H;
    const float* wq = w + (static_cast<long long>(q) * K + k) * H;
    for (int h = 0; h < H; ++h) acc += xq[h] * wq[h];
  }
  out[row * K + k] = acc;
}
