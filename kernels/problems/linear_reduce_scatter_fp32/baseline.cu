// The baseline's own kernel for linear_reduce_scatter_fp32. With the
// problem's matmul step it stands for PyTorch eager on one GPU:
//   partial = torch.bmm(x, w.transpose(1, 2))   # (R, R*S, K), cuBLASLt
//   out = partial.view(R, R, S, K).sum(0)       # the reduce, this kernel
// The workspace is the bmm's output (torch.empty: not zero-filled; the
// matmul writes all of it before this kernel reads it).
// @kb workspace partial bytes(R * R * S * K * 4)
// @kb launch reduce_ranks grid(cdiv(S * K, 256), R) block(256) args(partial, out, R, S, K)

// out[r][s][k] = sum_q partial[q][r*S + s][k]: element i of rank r's block
// of S*K outputs is element r*S*K + i of every rank's partial product.
extern "C" __global__ void reduce_ranks(const float* partial, float* out, int R,
                                        int S, int K) {
  const long long block_elems = static_cast<long long>(S) * K;
  const long long i =
      static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int r = blockIdx.y;
  if (i >= block_elems) return;
  const long long rank_stride = R * block_elems;  // one partial: (R*S, K)
  const long long at = r * block_elems + i;
  float acc = 0.0f;
  for (int q = 0; q < R; ++q) acc += partial[q * rank_stride + at];
  out[at] = acc;
}
