// The golden of moe_dispatch_grouped_linear_fp32: every output in fp64, from
// fp64 copies of x and w (expert stays int32). One thread per output
// (e, c, n): it scans the tokens in order for the c-th one routed to expert
// e (the definition of top-1 dispatch with capacity: expert e keeps its
// first C tokens), then takes the dot product with w[e][n]. Threads of a
// block share (e, c), so the scan's loads are broadcasts; it stops at the
// token found, so only empty slots scan all T tokens. Indices are 64-bit:
// w holds E*N*H elements, which exceeds 2^31 on the domain.
// @kb launch golden grid(cdiv(N, 128), C, E) block(128)
extern "C" __global__ void golden(const double* x, const int* expert,
                                  const double* w, double* out, int T, int H,
                                  int E, int C, int N) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  const int c = blockIdx.y;
  const int e = blockIdx.z;
  if (n >= N) return;
  int token = -1;
  for (int t = 0, seen = 0; t < T; ++t) {
    if (expert[t] != e) continue;
    if (seen == c) {
      token = t;
      break;
    }
    ++seen;
  }
  double acc = 0.0;  // An empty slot's row is zero.
  if (token >= 0) {
    const double* xt = x + static_cast<long long>(token) * H;
    const double* wn = w + (static_cast<long long>(e) * N + n) * H;
    for (int h = 0; h < H; ++h) acc += xt[h] * wn[h];
  }
  out[(static_cast<long long>(e) * C + c) * N + n] = acc;
}
