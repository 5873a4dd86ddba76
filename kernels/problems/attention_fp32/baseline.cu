// The baseline of attention_fp32, as eager PyTorch runs
//   scores = torch.bmm(q, k.transpose(1, 2))          # cuBLASLt (a step)
//   p = torch.softmax(scores / math.sqrt(D), dim=-1)  # the two kernels here
//   out = torch.bmm(p, v)                              # cuBLASLt (a step)
// The division and the softmax are separate kernels, as in eager mode, each
// reading and writing all G*S*S scores; they work in place on the
// workspace, which the first matmul fills (a baseline's workspace is not
// zero-filled: every element is written before it is read).
//
// @kb workspace scores bytes(G * S * S * 4)
// @kb launch scale_scores grid(cdiv(G * S * S, 256)) block(256) args(scores, G, S, D)
// @kb launch softmax_rows grid(G * S) block(256) args(scores, G, S)

namespace {
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// The block-wide max (kMax) or sum of x, returned to every thread. `red`
// holds kWarps floats; the trailing barrier lets the caller reuse it.
template <bool kMax>
__device__ float BlockReduce(float x, float* red) {
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    const float y = __shfl_xor_sync(0xffffffffu, x, offset);
    x = kMax ? fmaxf(x, y) : x + y;
  }
  if (lane == 0) red[warp] = x;
  __syncthreads();
  x = red[0];
#pragma unroll
  for (int w = 1; w < kWarps; ++w) x = kMax ? fmaxf(x, red[w]) : x + red[w];
  __syncthreads();
  return x;
}
}  // namespace

// scores /= sqrt(D), elementwise (torch's true division by a scalar).
extern "C" __global__ void scale_scores(float* scores, int G, int S, int D) {
  const long long n = static_cast<long long>(G) * S * S;
  const long long e =
      static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= n) return;
  scores[e] = scores[e] / sqrtf(static_cast<float>(D));
}

// Softmax of each row of S scores, in place, one block per row: max, then
// the sum of exp(x - max), then exp(x - max) / sum (torch's three passes).
extern "C" __global__ void __launch_bounds__(kThreads)
    softmax_rows(float* scores, int G, int S) {
  __shared__ float red[kWarps];
  const long long rows = static_cast<long long>(G) * S;
  if (blockIdx.x >= rows) return;  // Uniform per block.
  float* row = scores + static_cast<long long>(blockIdx.x) * S;
  float m = -__int_as_float(0x7f800000);  // -inf
  for (int j = threadIdx.x; j < S; j += kThreads) m = fmaxf(m, row[j]);
  m = BlockReduce<true>(m, red);
  float l = 0.0f;
  for (int j = threadIdx.x; j < S; j += kThreads) l += expf(row[j] - m);
  l = BlockReduce<false>(l, red);
  for (int j = threadIdx.x; j < S; j += kThreads) row[j] = expf(row[j] - m) / l;
}
