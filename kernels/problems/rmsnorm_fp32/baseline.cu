// The baseline of rmsnorm_fp32: PyTorch eager's unfused RMSNorm, as in
// Hugging Face's LlamaRMSNorm (and F.rms_norm's composite fallback):
//   var = x.pow(2).mean(-1, keepdim=True)
//   y = gamma * (x * torch.rsqrt(var + eps))
// Eager runs six kernels there (pow, mean, add, rsqrt, mul, mul) with two
// (R, C) temporaries. This plan counts the three passes that matter and
// gives eager the benefit of fusing within each, so that speedups are not
// inflated by the temporaries (on an H200 at the default shape: 11 us,
// against 27 us for the six-kernel eager code):
//   1. pow + mean: one block per row reduces x^2 into the workspace `var`;
//   2. add + rsqrt: one thread per row, `rstd` = rsqrt(var + eps);
//   3. mul, mul: one elementwise pass, y = gamma * (x * rstd), 4 elements a
//      thread with float4 loads where aligned (PyTorch's vectorized
//      elementwise kernel: 128 threads, 512 elements a block).
// Workspaces are written before they are read (they start as garbage).
// @kb workspace var bytes(R * 4)
// @kb workspace rstd bytes(R * 4)
// @kb launch pow_mean grid(R) block(512) args(x, var, R, C)
// @kb launch add_rsqrt grid(cdiv(R, 256)) block(256) args(var, rstd, R)
// @kb launch mul_mul grid(cdiv(R * C, 512)) block(128) args(x, gamma, rstd, y, R, C)

namespace {

constexpr int kReduceThreads = 512;
constexpr float kEps = 1e-6f;

}  // namespace

extern "C" __global__ void pow_mean(const float* x, float* var, int R, int C) {
  __shared__ float scratch[kReduceThreads / 32];
  const int r = blockIdx.x;
  if (r >= R) return;
  const float* row = x + static_cast<long long>(r) * C;
  float acc = 0.0f;
  for (int c = threadIdx.x; c < C; c += kReduceThreads) acc += row[c] * row[c];
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    acc = threadIdx.x < kReduceThreads / 32 ? scratch[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) {
      acc += __shfl_down_sync(0xffffffffu, acc, o);
    }
    if (threadIdx.x == 0) var[r] = acc / C;
  }
}

extern "C" __global__ void add_rsqrt(const float* var, float* rstd, int R) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < R) rstd[r] = rsqrtf(var[r] + kEps);
}

extern "C" __global__ void mul_mul(const float* x, const float* gamma,
                                   const float* rstd, float* y, int R, int C) {
  const long long n = static_cast<long long>(R) * C;
  const long long i0 =
      (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
  if (i0 + 3 < n && C % 4 == 0) {
    // The 4 elements share a row (C is a multiple of 4) and are 16-byte
    // aligned.
    const long long r = i0 / C;
    const int c = static_cast<int>(i0 - r * C);
    const float s = rstd[r];
    const float4 v = *reinterpret_cast<const float4*>(x + i0);
    const float4 g = *reinterpret_cast<const float4*>(gamma + c);
    *reinterpret_cast<float4*>(y + i0) = make_float4(
        g.x * (v.x * s), g.y * (v.y * s), g.z * (v.z * s), g.w * (v.w * s));
    return;
  }
  for (long long i = i0; i < i0 + 4 && i < n; ++i) {
    const long long r = i / C;
    y[i] = gamma[i - r * C] * (x[i] * rstd[r]);
  }
}
