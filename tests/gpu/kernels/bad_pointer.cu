// Crashes on purpose: writes through a wild pointer. Must get verdict
// `crashed` with the CUDA error, and the worker must go on serving.
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H, int K) {
  float* wild = reinterpret_cast<float*>(0xdead0000000ull);
  wild[threadIdx.x] = 1.0f;
  out[0] = wild[threadIdx.x + 1];
}
