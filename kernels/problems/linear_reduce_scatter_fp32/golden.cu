// The golden of linear_reduce_scatter_fp32: every output in fp64, from
// fp64 copies of the inputs. One thread per output element; the loops over
// ranks and features are the definition itself, so it is obviously right.
// Indices are 64-bit: x holds R*R*S*H elements, which exceeds 2^31 on the
// domain.
// @kb launch golden grid(cdiv(K, 128), S, R) block(128)
extern "C" __global__ void golden(const double* x, const double* w, double* out,
                                  int R, int S, int H, int K) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  const int s = blockIdx.y;
  const int r = blockIdx.z;
  if (k >= K) return;
  const long long rows = static_cast<long long>(R) * S;  // B = R*S
  const long long row = static_cast<long long>(r) * S + s;
  double acc = 0.0;
  for (int q = 0; q < R; ++q) {
    const double* xq = x + (q * rows + row) * H;  // x[q][r*S + s][:]
    // w[q][k][:]
    const double* wq = w + (static_cast<long long>(q) * K + k) * H;
    for (int h = 0; h < H; ++h) acc += xq[h] * wq[h];
  }
  out[row * K + k] = acc;  // out[r][s][k]
}
