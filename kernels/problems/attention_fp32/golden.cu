// The golden of attention_fp32, in fp64 from fp64 copies of the inputs:
//   out[g][i] = softmax_j(q[g][i] . k[g][j] / sqrt(D)) . v[g][j]
// One block per query row (i, g), of 128 threads: the row's S scores go to
// shared memory (S <= 4096 in the domain: 32 KiB of doubles), then the
// max, the exponentials and their sum, then one thread per output element
// d sums p_j * v[j][d]. This is O(S * D) per row, so the largest hidden
// case stays cheap, where a thread per (i, d) recomputing the row's
// scores would cost D times more.
// @kb launch golden grid(S, G) block(128)

namespace {
constexpr int kThreads = 128;
constexpr int kMaxS = 4096;  // The domain's largest S.
}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads)
    golden(const double* q, const double* k, const double* v, double* out,
           int G, int S, int D) {
  __shared__ double p[kMaxS];
  __shared__ double partial[kThreads];
  const int i = blockIdx.x;
  const int g = blockIdx.y;
  const int t = threadIdx.x;
  if (i >= S || g >= G) return;  // Uniform per block: no barrier skipped.
  // 64-bit offsets: G*S*D reaches 2^29 in the domain.
  const long long base = static_cast<long long>(g) * S * D;
  const double* qi = q + base + static_cast<long long>(i) * D;
  const double scale = 1.0 / sqrt(static_cast<double>(D));

  // Scores and their max.
  double m = -1.0e308;  // Below any score (|score| <= sqrt(D) * max|q||k|).
  for (int j = t; j < S; j += kThreads) {
    const double* kj = k + base + static_cast<long long>(j) * D;
    double s = 0;
    for (int d = 0; d < D; ++d) s += qi[d] * kj[d];
    p[j] = s * scale;
    m = fmax(m, p[j]);
  }
  partial[t] = m;
  __syncthreads();
  for (int n = kThreads / 2; n > 0; n /= 2) {
    if (t < n) partial[t] = fmax(partial[t], partial[t + n]);
    __syncthreads();
  }
  m = partial[0];
  __syncthreads();  // Everyone has read partial[0] before it is reused.

  // Unnormalised probabilities and their sum.
  double l = 0;
  for (int j = t; j < S; j += kThreads) {
    p[j] = exp(p[j] - m);
    l += p[j];
  }
  partial[t] = l;
  __syncthreads();
  for (int n = kThreads / 2; n > 0; n /= 2) {
    if (t < n) partial[t] += partial[t + n];
    __syncthreads();
  }
  l = partial[0];

  // One thread per output element.
  for (int d = t; d < D; d += kThreads) {
    double acc = 0;
    for (int j = 0; j < S; ++j) {
      acc += p[j] * v[base + static_cast<long long>(j) * D + d];
    }
    out[base + static_cast<long long>(i) * D + d] = acc / l;
  }
}
