// The golden of softmax_fp32: every output in fp64, from fp64 copies of the
// inputs (the problem's signature, every tensor as double). One block of
// 256 threads per row: the row's max, then the sum of exp(x - max), each a
// strided loop in double and a plain tree reduction in shared memory; then
// each output. Subtracting the max keeps exp finite on any input. (One
// thread per row would leave most of the GPU idle on a few long rows: 150 ms
// at R = 32, C = 262144.)
// @kb launch golden grid(R) block(256)

namespace {

constexpr int kThreads = 256;

// Reduces `v` over the block with max (is_max) or +; every thread gets the
// result.
__device__ double BlockReduce(double v, bool is_max, double* s) {
  s[threadIdx.x] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      const double other = s[threadIdx.x + half];
      s[threadIdx.x] =
          is_max ? fmax(s[threadIdx.x], other) : s[threadIdx.x] + other;
    }
    __syncthreads();
  }
  const double result = s[0];
  __syncthreads();  // s is reused by the next reduction.
  return result;
}

}  // namespace

extern "C" __global__ void golden(const double* x, double* y, int R, int C) {
  __shared__ double s[kThreads];
  const int r = blockIdx.x;
  if (r >= R) return;  // The whole block leaves together.
  // 64-bit offsets: R*C exceeds 2^31 in the domain.
  const double* row = x + static_cast<long long>(r) * C;
  double* out = y + static_cast<long long>(r) * C;
  double m = row[0];  // C >= 1: a real element, not an infinity.
  for (int c = threadIdx.x; c < C; c += kThreads) m = fmax(m, row[c]);
  m = BlockReduce(m, true, s);
  double sum = 0;
  for (int c = threadIdx.x; c < C; c += kThreads) sum += exp(row[c] - m);
  sum = BlockReduce(sum, false, s);
  for (int c = threadIdx.x; c < C; c += kThreads) {
    out[c] = exp(row[c] - m) / sum;
  }
}
