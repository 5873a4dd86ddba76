// Row sums, fp32: one block of 256 threads per row, a strided loop then a
// block sum (warp shuffles, then one value per warp through shared memory).
// Summing 256 partial sums as a tree keeps the fp32 rounding error far
// below a sequential loop's on long rows. Correct on every shape of the
// domain: every index is guarded, no alignment or divisibility is assumed,
// and row offsets are 64-bit.
// @kb problem row_sum_fp32
// @kb launch row_sum grid(R) block(256)

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

}  // namespace

extern "C" __global__ void row_sum(const float* x, float* out, int R, int C) {
  __shared__ float scratch[kWarps];
  const int r = blockIdx.x;
  if (r >= R) return;  // The whole block leaves together.
  const float* row = x + static_cast<long long>(r) * C;
  float acc = 0.0f;
  for (int c = threadIdx.x; c < C; c += kThreads) acc += row[c];
  for (int offset = 16; offset > 0; offset >>= 1) {
    acc += __shfl_xor_sync(0xffffffffu, acc, offset);
  }
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int w = 0; w < kWarps; ++w) total += scratch[w];
    out[r] = total;
  }
}
