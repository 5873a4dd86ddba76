// The baseline of row_mean_fp32, as torch.mean(x, dim=1) runs it: one
// block of 256 threads per row, strided partial sums, then a tree in
// shared memory.
// @kb launch row_mean grid(R) block(256) args(x, out, C)
extern "C" __global__ void row_mean(const float* x, float* out, int C) {
  __shared__ float partial[256];
  const long long row = blockIdx.x;
  float acc = 0.0f;
  for (int c = threadIdx.x; c < C; c += blockDim.x) acc += x[row * C + c];
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[row] = partial[0] / C;
}
