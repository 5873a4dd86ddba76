// Attack: %:include of a file that only the test knows (a canary in a temp
// dir, readable by kbd's user): proves arbitrary reads, not just /etc.
// clang-format off
__device__ int leak[] = {
%:include "@CANARY_FILE@"
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
