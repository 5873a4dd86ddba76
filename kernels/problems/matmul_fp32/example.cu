// A shared-memory tiled fp32 matmul, C = A . B: each 256-thread block
// computes a 64 x 64 tile of C, each thread a 4 x 4 sub-tile held in
// registers, stepping through K in slabs of 16 staged in shared memory.
// Every global load and store is guarded, so any M, N, K works (no
// alignment or divisibility assumed); fp32 FMA accumulation, no TF32.
//
// @kb problem matmul_fp32
// @kb launch matmul grid(cdiv(N, 64), cdiv(M, 64)) block(256)

namespace {
constexpr int kTileM = 64;
constexpr int kTileN = 64;
constexpr int kTileK = 16;
constexpr int kThreads = 256;  // 16 x 16 threads, 4 x 4 outputs each.
constexpr int kSub = 4;
}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads)
    matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  // A's tile is stored k-major so the inner loop reads one row of it; the
  // +1 pad spreads the transposing stores over the banks.
  __shared__ float a_tile[kTileK][kTileM + 1];
  __shared__ float b_tile[kTileK][kTileN];
  const int tx = threadIdx.x % 16;
  const int ty = threadIdx.x / 16;
  const int m0 = blockIdx.y * kTileM;
  const int n0 = blockIdx.x * kTileN;
  float acc[kSub][kSub] = {};
  for (int k0 = 0; k0 < K; k0 += kTileK) {
    // Out-of-range elements load as 0, which adds nothing to the sums.
    for (int i = threadIdx.x; i < kTileM * kTileK; i += kThreads) {
      const int r = i / kTileK, c = i % kTileK;
      const int m = m0 + r, k = k0 + c;
      a_tile[c][r] =
          (m < M && k < K) ? A[static_cast<long long>(m) * K + k] : 0.0f;
    }
    for (int i = threadIdx.x; i < kTileK * kTileN; i += kThreads) {
      const int r = i / kTileN, c = i % kTileN;
      const int k = k0 + r, n = n0 + c;
      b_tile[r][c] =
          (k < K && n < N) ? B[static_cast<long long>(k) * N + n] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTileK; ++kk) {
      // Rows ty + 16 i and columns tx + 16 j: a warp reads 16 consecutive
      // columns of b_tile and two rows of a_tile (broadcasts).
      float a[kSub], b[kSub];
#pragma unroll
      for (int i = 0; i < kSub; ++i) a[i] = a_tile[kk][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < kSub; ++j) b[j] = b_tile[kk][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < kSub; ++i) {
#pragma unroll
        for (int j = 0; j < kSub; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kSub; ++i) {
    const int m = m0 + ty + 16 * i;
#pragma unroll
    for (int j = 0; j < kSub; ++j) {
      const int n = n0 + tx + 16 * j;
      if (m < M && n < N) C[static_cast<long long>(m) * N + n] = acc[i][j];
    }
  }
}
