// Simple top-1 MoE dispatch with capacity, then each expert's linear
// (fp32): one thread per output (e, c, n). Every thread of a block has the
// same slot (e, c) and scans the routing in token order for the c-th token
// of expert e (the loads are broadcasts; the scan stops at the token), then
// takes its dot product with w[e][n]. Correct for every shape of the domain
// (64-bit indices, every index guarded), not fast: a fast kernel computes
// the slots once (a prefix count per expert) and runs a tiled GEMM per
// expert, skipping empty slots' work but still writing their zeros.
// out[e][c][n] = x[t] . w[e][n] for t the c-th token routed to e, else 0
//
// @kb problem moe_dispatch_grouped_linear_fp32
// @kb launch moe_dispatch_linear grid(cdiv(N, 256), C, E) block(256)

extern "C" __global__ void moe_dispatch_linear(const float* x,
                                               const int* expert,
                                               const float* w, float* out,
                                               int T, int H, int E, int C,
                                               int N) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  const int c = blockIdx.y;
  const int e = blockIdx.z;
  if (n >= N) return;
  int token = -1;  // Tokens past the C-th of an expert are dropped.
  for (int t = 0, seen = 0; t < T && token < 0; ++t) {
    if (expert[t] == e) {
      if (seen == c) token = t;
      ++seen;
    }
  }
  float acc = 0.0f;
  if (token >= 0) {
    const float* xt = x + static_cast<long long>(token) * H;
    const float* wn = w + (static_cast<long long>(e) * N + n) * H;
    for (int h = 0; h < H; ++h) acc += xt[h] * wn[h];
  }
  out[(static_cast<long long>(e) * C + c) * N + n] = acc;
}
