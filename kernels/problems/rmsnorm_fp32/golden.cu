// The golden of rmsnorm_fp32: every output in fp64, from fp64 copies of the
// inputs (the problem's signature, every tensor as double). One block of
// 256 threads per row: the mean of squares, a strided loop in double and a
// plain tree sum in shared memory; then each output. (One thread per row
// would leave most of the GPU idle on a few long rows.)
// @kb launch golden grid(R) block(256)

namespace {

constexpr int kThreads = 256;

}  // namespace

extern "C" __global__ void golden(const double* x, const double* gamma,
                                  double* y, int R, int C) {
  __shared__ double s[kThreads];
  const int r = blockIdx.x;
  if (r >= R) return;  // The whole block leaves together.
  // 64-bit offsets: R*C exceeds 2^31 in the domain.
  const double* row = x + static_cast<long long>(r) * C;
  double* out = y + static_cast<long long>(r) * C;
  double sq = 0;
  for (int c = threadIdx.x; c < C; c += kThreads) sq += row[c] * row[c];
  s[threadIdx.x] = sq;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) s[threadIdx.x] += s[threadIdx.x + half];
    __syncthreads();
  }
  const double rstd = 1.0 / sqrt(s[0] / C + 1e-6);  // eps as in the statement.
  for (int c = threadIdx.x; c < C; c += kThreads) {
    out[c] = row[c] * rstd * gamma[c];
  }
}
