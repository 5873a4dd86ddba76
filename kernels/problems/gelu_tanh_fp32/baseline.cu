// The baseline of gelu_tanh_fp32: F.gelu(x, approximate="tanh") on a
// contiguous fp32 tensor, one elementwise kernel (GeluCUDAKernelImpl through
// PyTorch's vectorized_elementwise_kernel): 128 threads a block, 4 elements
// a thread with float4 loads and stores (the tensors are 16-byte aligned),
// the last partial block element by element; the math is PyTorch's, in
// fp32: kBeta = sqrt(2) * 2/sqrt(pi) * 0.5, kKappa = 0.044715.
// @kb launch gelu_forward grid(cdiv(N, 512)) block(128)

namespace {

__device__ float Gelu(float v) {
  // M_SQRT2 * M_2_SQRTPI * 0.5, in double, then rounded to float.
  const float kBeta =
      static_cast<float>(1.41421356237309504880 * 1.12837916709551257390 * 0.5);
  const float kKappa = 0.044715f;
  const float inner = kBeta * (v + kKappa * (v * v * v));
  return 0.5f * v * (1.0f + tanhf(inner));
}

}  // namespace

extern "C" __global__ void gelu_forward(const float* x, float* y, int N) {
  const int kBlockWork = 512;  // 128 threads x 4 elements.
  const long long start = static_cast<long long>(blockIdx.x) * kBlockWork;
  const long long remaining = N - start;
  if (remaining >= kBlockWork) {
    const long long i = start + threadIdx.x * 4;
    const float4 v = *reinterpret_cast<const float4*>(x + i);
    *reinterpret_cast<float4*>(y + i) =
        make_float4(Gelu(v.x), Gelu(v.y), Gelu(v.z), Gelu(v.w));
    return;
  }
  // The last, partial block: PyTorch's unrolled path, strided by thread.
  for (int j = threadIdx.x; j < remaining; j += blockDim.x) {
    y[start + j] = Gelu(x[start + j]);
  }
}
