// Attack: the static_assert + stringification trick on the canary file and
// on the environment, with the angle form and traversal.
// clang-format off
#define STR(...) #__VA_ARGS__
static_assert(false, STR(
%:include <../../../../../../../../../..@CANARY_FILE@>
));
static_assert(false, STR(
%:include "/proc/self/environ"
));
// @kb launch gather_linear grid(B) block(32)
extern "C" __global__ void gather_linear(const float* x, const float* w,
                                         const float* bias, float* out,
                                         int R, int B, int H, int K) { out[0] = 1; }
