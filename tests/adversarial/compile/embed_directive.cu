// Attack: #embed (C23 / C++26) and %:embed: the directive made to read a
// file into an array.
// clang-format off
__device__ unsigned char leak[] = {
%:embed "@CANARY_FILE@"
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
