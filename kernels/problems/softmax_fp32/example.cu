// Softmax over the last dim, fp32: one block of 256 threads per row and
// three passes over the row (its max, the sum of exp(x - max), the
// outputs), each a strided loop then a block reduction (warp shuffles, then
// one value per warp through shared memory). The second and third passes
// re-read the row, mostly from L1/L2. Correct on every shape of the domain:
// every index is guarded (threads past C add nothing), no alignment or
// divisibility is assumed, and row offsets are 64-bit.
// @kb problem softmax_fp32
// @kb launch softmax grid(R) block(256)
#include <math_constants.h>

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// Reduces `v` over the block with `op`; every thread gets the result.
// `scratch` holds one value per warp.
template <typename Op>
__device__ float BlockReduce(float v, float* scratch, Op op) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  v = scratch[0];
  for (int w = 1; w < kWarps; ++w) v = op(v, scratch[w]);
  __syncthreads();  // The next reduction overwrites scratch.
  return v;
}

}  // namespace

extern "C" __global__ void softmax(const float* x, float* y, int R, int C) {
  __shared__ float scratch[kWarps];
  const int r = blockIdx.x;
  if (r >= R) return;  // The whole block leaves together.
  const float* row = x + static_cast<long long>(r) * C;
  float* out = y + static_cast<long long>(r) * C;

  float m = -CUDART_INF_F;
  for (int c = threadIdx.x; c < C; c += kThreads) m = fmaxf(m, row[c]);
  m = BlockReduce(m, scratch, MaxOp());

  float sum = 0.0f;
  for (int c = threadIdx.x; c < C; c += kThreads) sum += expf(row[c] - m);
  sum = BlockReduce(sum, scratch, SumOp());

  const float inv = 1.0f / sum;  // sum >= 1: the max term is exp(0).
  for (int c = threadIdx.x; c < C; c += kThreads) {
    out[c] = expf(row[c] - m) * inv;
  }
}
