// The golden of layernorm_fp32: every output in fp64, from fp64 copies of
// the inputs (the problem's signature, every tensor as double). One block
// of 256 threads per row: the mean, then the biased variance as the mean of
// squared deviations (two passes, so no cancellation), each a strided loop
// in double and a plain tree sum in shared memory; then each output. (One
// thread per row would leave most of the GPU idle on a few long rows.)
// @kb launch golden grid(R) block(256)

namespace {

constexpr int kThreads = 256;

// Sums `v` over the block; every thread gets the result.
__device__ double BlockSum(double v, double* s) {
  s[threadIdx.x] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) s[threadIdx.x] += s[threadIdx.x + half];
    __syncthreads();
  }
  const double result = s[0];
  __syncthreads();  // s is reused by the next sum.
  return result;
}

}  // namespace

extern "C" __global__ void golden(const double* x, const double* gamma,
                                  const double* beta, double* y, int R, int C) {
  __shared__ double s[kThreads];
  const int r = blockIdx.x;
  if (r >= R) return;  // The whole block leaves together.
  // 64-bit offsets: R*C exceeds 2^31 in the domain.
  const double* row = x + static_cast<long long>(r) * C;
  double* out = y + static_cast<long long>(r) * C;
  double sum = 0;
  for (int c = threadIdx.x; c < C; c += kThreads) sum += row[c];
  const double mean = BlockSum(sum, s) / C;
  double sq = 0;
  for (int c = threadIdx.x; c < C; c += kThreads) {
    sq += (row[c] - mean) * (row[c] - mean);
  }
  const double var = BlockSum(sq, s) / C;
  const double rstd = 1.0 / sqrt(var + 1e-5);  // eps as in the statement.
  for (int c = threadIdx.x; c < C; c += kThreads) {
    out[c] = (row[c] - mean) * rstd * gamma[c] + beta[c];
  }
}
