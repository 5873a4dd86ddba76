// Attack: %:include_next (GNU extension) with an absolute path: a different
// directive name that a filter for "include" might match or miss.
// clang-format off
__device__ int leak[] = {
%:include_next "@CANARY_FILE@"
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
