// Attack: the trigraph ??= (= #). C++17 dropped trigraphs, but a front end
// may still honour them (or with a flag); the policy must not rely on it.
// clang-format off
__device__ int leak[] = {
??=include "@CANARY_FILE@"
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
