// Breaks the contract: one parameter short. Must get verdict `rejected`
// naming the expected prototype.
// @kb problem gather_linear_fp32
// @kb launch gather_linear grid(B, cdiv(K, 256)) block(256)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out, int R,
                                         int B, int H) {}
