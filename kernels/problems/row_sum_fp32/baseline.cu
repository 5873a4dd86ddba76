// The baseline of row_sum_fp32: torch.sum(x, dim=1) on a contiguous fp32
// (R, C) tensor, one launch of PyTorch's reduce_kernel (Reduce.cuh). For a
// reduction over the contiguous dim its config puts the block's threads
// along the row, reads 4 values per load (16-byte vectors, the rows being
// aligned when C is a multiple of 4) into 4 independent accumulators, then
// reduces across the warp and the block. This file does that with one
// block of 512 threads per row. One deviation: when R is too small to fill
// the GPU, PyTorch also splits a row over several blocks that meet through a
// global staging buffer and semaphores; this plan keeps one block per row.
// On an H200 at the default shape it took 5.5 us where torch.sum took 19 us
// (CUDA events around the call): if anything, the baseline is fast.
// @kb launch reduce_sum grid(R) block(512)

namespace {

constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;

}  // namespace

extern "C" __global__ void reduce_sum(const float* x, float* out, int R,
                                      int C) {
  __shared__ float scratch[kWarps];
  const int r = blockIdx.x;
  if (r >= R) return;
  const float* row = x + static_cast<long long>(r) * C;
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  if (C % 4 == 0) {
    const float4* row4 = reinterpret_cast<const float4*>(row);
    for (int i = threadIdx.x; i < C / 4; i += kThreads) {
      const float4 v = row4[i];
      acc[0] += v.x;
      acc[1] += v.y;
      acc[2] += v.z;
      acc[3] += v.w;
    }
  } else {
    for (int c = threadIdx.x; c < C; c += kThreads) acc[0] += row[c];
  }
  float v = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < kWarps ? scratch[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (threadIdx.x == 0) out[r] = v;
  }
}
