// Cheat (or bug): reads through a null pointer. The pointer is a device
// global that is never set (so it is zero at run time), which the compiler
// cannot fold away as it could a literal nullptr.
// Must get: crashed, "illegal" (CUDA's illegal address error), and the
// worker must go on serving.
//
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)

__device__ const float* table = nullptr;

extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  const int b = blockIdx.x;
  const int k = blockIdx.y * blockDim.x + threadIdx.x;
  if (b >= B || k >= K) return;
  const float* p = *(const float* volatile*)&table;
  out[b * K + k] = p[k];  // Address 0 + 4k.
}
