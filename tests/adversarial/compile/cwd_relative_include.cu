// Attack: a plain relative name, looked up beside the source and in the
// compiler's working directory (kbd's, e.g. its data dir under a service
// manager). The test runs kbd and kbcompile with the canary's directory as
// their working directory, so "canary.txt" finds the canary there.
// clang-format off
__device__ int leak[] = {
%:include "canary.txt"
};
#define STR(...) #__VA_ARGS__
static_assert(false, STR(
#include "./canary.txt"
));
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = leak[0]; }
