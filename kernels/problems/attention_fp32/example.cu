// Attention, one 128-thread block per query row (i, g), fp32:
//   out[g][i] = softmax_j(q[g][i] . k[g][j] / sqrt(D)) . v[g][j]
// The 4 warps split the keys (warp w takes j = w, w + 4, ...); within a
// warp, lane l holds q[d] for d = l, l + 32, l + 64, l + 96 (D <= 128), so
// a score is a warp-wide dot product (coalesced read of k's row, shuffle
// sum). Each warp keeps an online softmax (running max m, running sum l,
// its share of the output rescaled whenever m grows), so the S scores are
// never stored; the warps' partial results are merged at the end. Any S
// and any D <= 128 work: every load is guarded, nothing is assumed about
// alignment.
//
// @kb problem attention_fp32
// @kb launch attention grid(S, G) block(128)

namespace {
constexpr int kWarps = 4;
constexpr int kMaxD = 128;  // The domain's largest D.
constexpr int kPerLane = kMaxD / 32;

__device__ float WarpSum(float x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    x += __shfl_xor_sync(0xffffffffu, x, offset);
  }
  return x;
}
}  // namespace

extern "C" __global__ void __launch_bounds__(kWarps * 32)
    attention(const float* q, const float* k, const float* v, float* out, int G,
              int S, int D) {
  __shared__ float warp_max[kWarps];
  __shared__ float warp_sum[kWarps];
  __shared__ float warp_out[kWarps][kMaxD];
  const int i = blockIdx.x;
  const int g = blockIdx.y;
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (i >= S || g >= G) return;  // Uniform per block: no barrier skipped.
  const long long base = static_cast<long long>(g) * S * D;
  // q is pre-scaled by 1/sqrt(D), so a dot product is the score.
  const float scale = 1.0f / sqrtf(static_cast<float>(D));
  float qd[kPerLane], acc[kPerLane];
#pragma unroll
  for (int c = 0; c < kPerLane; ++c) {
    const int d = lane + 32 * c;
    qd[c] = d < D ? q[base + static_cast<long long>(i) * D + d] * scale : 0.0f;
    acc[c] = 0.0f;
  }
  // -inf: the first key's rescale factor expf(-inf) is then 0.
  float m = -__int_as_float(0x7f800000);
  float l = 0.0f;
  for (int j = warp; j < S; j += kWarps) {
    const float* kj = k + base + static_cast<long long>(j) * D;
    const float* vj = v + base + static_cast<long long>(j) * D;
    float s = 0.0f;
#pragma unroll
    for (int c = 0; c < kPerLane; ++c) {
      const int d = lane + 32 * c;
      if (d < D) s = fmaf(qd[c], kj[d], s);
    }
    s = WarpSum(s);  // Every lane holds the score.
    const float m_new = fmaxf(m, s);
    const float rescale = expf(m - m_new);
    const float p = expf(s - m_new);
    l = fmaf(l, rescale, p);
#pragma unroll
    for (int c = 0; c < kPerLane; ++c) {
      const int d = lane + 32 * c;
      if (d < D) acc[c] = fmaf(p, vj[d], acc[c] * rescale);
    }
    m = m_new;
  }
  // Merge the warps. A warp that saw no key (S < 4) has m = -inf, l = 0 and
  // acc = 0, so it weighs 0; warp 0 always sees key 0.
  if (lane == 0) {
    warp_max[warp] = m;
    warp_sum[warp] = l;
  }
#pragma unroll
  for (int c = 0; c < kPerLane; ++c) {
    const int d = lane + 32 * c;
    if (d < D) warp_out[warp][d] = acc[c];
  }
  __syncthreads();
  float m_all = warp_max[0];
#pragma unroll
  for (int w = 1; w < kWarps; ++w) m_all = fmaxf(m_all, warp_max[w]);
  float weight[kWarps];
  float l_all = 0.0f;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) {
    weight[w] = expf(warp_max[w] - m_all);
    l_all = fmaf(warp_sum[w], weight[w], l_all);
  }
  for (int d = threadIdx.x; d < D; d += blockDim.x) {
    float o = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) o = fmaf(warp_out[w][d], weight[w], o);
    out[base + static_cast<long long>(i) * D + d] = o / l_all;
  }
}
